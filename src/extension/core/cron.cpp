// cron.cpp: parsing cron expressions and searching their next wall-clock time (see cron.hpp). Pure C++:
// no PostgreSQL header, no allocation, no exception.
#include "core/cron.hpp"

#include <cctype>
#include <cstdio>
#include <cstring>

namespace pgjq {

namespace {

const char* const k_month_names[] = {"jan", "feb", "mar", "apr", "may", "jun",  "jul",
                                     "aug", "sep", "oct", "nov", "dec", nullptr};
const char* const k_weekday_names[] = {"sun", "mon", "tue", "wed", "thu", "fri", "sat", nullptr};

struct field_spec {
    const char* name;
    int lo, hi;
    const char* const* names;  // names of the values lo, lo + 1, ...; nullptr: numbers only
    const char* names_are;     // for errors: "a month name"
};

const field_spec k_second = {"second", 0, 59, nullptr, nullptr};
const field_spec k_minute = {"minute", 0, 59, nullptr, nullptr};
const field_spec k_hour = {"hour", 0, 23, nullptr, nullptr};
const field_spec k_day = {"day-of-month", 1, 31, nullptr, nullptr};
const field_spec k_month = {"month", 1, 12, k_month_names, "a month name"};
const field_spec k_weekday = {"day-of-week", 0, 7, k_weekday_names, "a day name"};

struct alias {
    const char* name;
    const char* expression;
};
const alias k_aliases[] = {
    {"@yearly", "0 0 1 1 *"}, {"@annually", "0 0 1 1 *"}, {"@monthly", "0 0 1 * *"}, {"@weekly", "0 0 * * 0"},
    {"@daily", "0 0 * * *"},  {"@midnight", "0 0 * * *"}, {"@hourly", "0 * * * *"},
};

struct unit {
    const char* name;
    int64_t seconds;
};
const unit k_units[] = {
    {"s", 1},      {"sec", 1},     {"secs", 1},     {"second", 1},   {"seconds", 1}, {"m", 60},
    {"min", 60},   {"mins", 60},   {"minute", 60},  {"minutes", 60}, {"h", 3600},    {"hr", 3600},
    {"hrs", 3600}, {"hour", 3600}, {"hours", 3600}, {"d", 86400},    {"day", 86400}, {"days", 86400},
};

// Echoed values are cut to this many bytes, so that a message never grows with its input.
constexpr int k_echo = 64;

bool is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

bool equals_ignoring_case(const char* a, size_t a_len, const char* b)
{
    size_t b_len = strlen(b);
    if (a_len != b_len)
        return false;
    for (size_t i = 0; i < a_len; i++)
        if (tolower(static_cast<unsigned char>(a[i])) != tolower(static_cast<unsigned char>(b[i])))
            return false;
    return true;
}

class field_parser {
  public:
    field_parser(const field_spec& spec, char* error, size_t error_len)
        : m_spec(spec), m_error(error), m_error_len(error_len)
    {
    }

    // Parses the field text [s, s + len) into *mask (bit v for value v). False with the error written.
    bool parse(const char* s, size_t len, uint64_t* mask)
    {
        *mask = 0;
        size_t start = 0;
        for (size_t i = 0; i <= len; i++) {
            if (i < len && s[i] != ',')
                continue;
            if (i == start) {
                fail("%s field \"%.*s\" has an empty element", m_spec.name, echo(len), s);
                return false;
            }
            if (!parse_element(s + start, i - start, mask))
                return false;
            start = i + 1;
        }
        return true;
    }

  private:
    template <typename... Args>
    void fail(const char* format, Args... args)
    {
        snprintf(m_error, m_error_len, format, args...);
    }

    static int echo(size_t len)
    {
        return len > static_cast<size_t>(k_echo) ? k_echo : static_cast<int>(len);
    }

    // A number or a name: [s, s + len) is a maximal run of letters and digits.
    bool parse_value(const char* s, size_t len, int* value)
    {
        bool digits = true;
        for (size_t i = 0; i < len; i++)
            digits = digits && isdigit(static_cast<unsigned char>(s[i]));
        if (digits && len > 0) {
            long long v = 0;
            for (size_t i = 0; i < len && v <= 1000000; i++)
                v = v * 10 + (s[i] - '0');
            if (v < m_spec.lo || v > m_spec.hi) {
                fail("%s field \"%.*s\" is out of range %d-%d", m_spec.name, echo(len), s, m_spec.lo, m_spec.hi);
                return false;
            }
            *value = static_cast<int>(v);
            return true;
        }
        if (m_spec.names != nullptr)
            for (int i = 0; m_spec.names[i] != nullptr; i++)
                if (equals_ignoring_case(s, len, m_spec.names[i])) {
                    *value = m_spec.lo + i;
                    return true;
                }
        if (m_spec.names != nullptr)
            fail("%s field \"%.*s\" is neither a number nor %s", m_spec.name, echo(len), s, m_spec.names_are);
        else
            fail("%s field \"%.*s\" is not a number", m_spec.name, echo(len), s);
        return false;
    }

    static size_t token_length(const char* s, size_t len)
    {
        size_t n = 0;
        while (n < len && isalnum(static_cast<unsigned char>(s[n])))
            n++;
        return n;
    }

    // element = "*" | value | value "-" value, optionally followed by "/" step (not after a single value).
    bool parse_element(const char* s, size_t len, uint64_t* mask)
    {
        int first, last;
        bool range;
        size_t at;
        if (s[0] == '*') {
            first = m_spec.lo;
            last = m_spec.hi;
            range = true;
            at = 1;
        } else {
            size_t n = token_length(s, len);
            if (n == 0) {
                fail("%s field \"%.*s\" is not understood", m_spec.name, echo(len), s);
                return false;
            }
            if (!parse_value(s, n, &first))
                return false;
            last = first;
            range = false;
            at = n;
            if (at < len && s[at] == '-') {
                size_t m = token_length(s + at + 1, len - at - 1);
                if (m == 0) {
                    fail("%s field \"%.*s\" has a range without an end", m_spec.name, echo(len), s);
                    return false;
                }
                if (!parse_value(s + at + 1, m, &last))
                    return false;
                if (last < first) {
                    fail("%s field \"%.*s\" is a reversed range", m_spec.name, echo(len), s);
                    return false;
                }
                range = true;
                at += 1 + m;
            }
        }
        int step = 1;
        if (at < len && s[at] == '/') {
            if (!range) {
                fail("%s field \"%.*s\" has a step after a single value (write a range or * before the /)", m_spec.name,
                     echo(len), s);
                return false;
            }
            const char* step_text = s + at + 1;
            size_t m = token_length(step_text, len - at - 1);
            bool digits = m > 0;
            for (size_t i = 0; i < m; i++)
                digits = digits && isdigit(static_cast<unsigned char>(step_text[i]));
            long long v = 0;
            for (size_t i = 0; digits && i < m && v <= 1000000; i++)
                v = v * 10 + (step_text[i] - '0');
            int span = m_spec.hi - m_spec.lo + 1;
            if (!digits || v < 1 || v > span) {
                fail("%s field \"%.*s\" has a step out of range 1-%d", m_spec.name, echo(len), s, span);
                return false;
            }
            step = static_cast<int>(v);
            at += 1 + m;
        }
        if (at != len) {
            fail("%s field \"%.*s\" is not understood", m_spec.name, echo(len), s);
            return false;
        }
        for (int v = first; v <= last; v += step)
            *mask |= UINT64_C(1) << v;
        return true;
    }

    const field_spec& m_spec;
    char* m_error;
    size_t m_error_len;
};

// @every <amount><unit> ...: the total in seconds, or false with the error written.
bool parse_every(const char* s, size_t len, int64_t* seconds, char* error, size_t error_len)
{
    while (len > 0 && is_blank(*s)) {
        s++;
        len--;
    }
    int64_t total = 0;
    size_t i = 0, terms = 0;
    bool over = false;
    for (;;) {
        while (i < len && is_blank(s[i]))
            i++;
        if (i == len)
            break;
        size_t digits = 0;
        long long amount = 0;
        while (i + digits < len && isdigit(static_cast<unsigned char>(s[i + digits]))) {
            if (amount <= k_max_every_seconds)
                amount = amount * 10 + (s[i + digits] - '0');
            digits++;
        }
        if (digits == 0) {
            snprintf(error, error_len, "@every interval \"%.*s\" is not understood",
                     len > 64 ? 64 : static_cast<int>(len), s);
            return false;
        }
        i += digits;
        while (i < len && is_blank(s[i]))
            i++;
        size_t letters = 0;
        while (i + letters < len && isalpha(static_cast<unsigned char>(s[i + letters])))
            letters++;
        const unit* found = nullptr;
        for (const unit& u : k_units)
            if (equals_ignoring_case(s + i, letters, u.name))
                found = &u;
        if (found == nullptr) {
            snprintf(error, error_len, "@every unit \"%.*s\" is not understood (use s, m, h or d)",
                     letters == 0 ? 1 : static_cast<int>(letters > 64 ? 64 : letters), letters == 0 ? "?" : s + i);
            return false;
        }
        i += letters;
        terms++;
        if (amount > k_max_every_seconds || (total += amount * found->seconds) > k_max_every_seconds)
            over = true;
    }
    if (terms == 0) {
        snprintf(error, error_len, "@every needs an interval, as in \"@every 30 seconds\" or \"@every 1h30m\"");
        return false;
    }
    if (over || total < k_min_every_seconds) {
        snprintf(error, error_len, "@every interval \"%.*s\" is out of range 1 second to 366 days",
                 len > 64 ? 64 : static_cast<int>(len), s);
        return false;
    }
    *seconds = total;
    return true;
}

cron_parse_result parse_fields(const char* text, size_t len)
{
    cron_parse_result r;
    memset(&r, 0, sizeof r);
    const char* starts[7];
    size_t lengths[7];
    int count = 0;
    for (size_t i = 0; i < len;) {
        while (i < len && is_blank(text[i]))
            i++;
        if (i == len)
            break;
        size_t j = i;
        while (j < len && !is_blank(text[j]))
            j++;
        if (count < 7) {
            starts[count] = text + i;
            lengths[count] = j - i;
        }
        count++;
        i = j;
    }
    if (count != 5 && count != 6) {
        snprintf(r.error, sizeof r.error,
                 "cron expression has %d fields, not 5 (minute hour day-of-month month day-of-week) or 6 (with a "
                 "seconds field first)",
                 count);
        return r;
    }
    const field_spec* specs6[] = {&k_second, &k_minute, &k_hour, &k_day, &k_month, &k_weekday};
    const field_spec* const* specs = count == 6 ? specs6 : specs6 + 1;
    uint64_t masks[6] = {UINT64_C(1), 0, 0, 0, 0, 0};  // seconds: {0} unless given
    uint64_t* targets = count == 6 ? masks : masks + 1;
    for (int f = 0; f < count; f++) {
        field_parser parser(*specs[f], r.error, sizeof r.error);
        if (!parser.parse(starts[f], lengths[f], &targets[f]))
            return r;
    }
    int day_field = count == 6 ? 3 : 2;
    r.expr.seconds = masks[0];
    r.expr.minutes = masks[1];
    r.expr.hours = static_cast<uint32_t>(masks[2]);
    r.expr.days = static_cast<uint32_t>(masks[3]);
    r.expr.months = static_cast<uint16_t>(masks[4]);
    uint64_t weekdays = masks[5];
    if (weekdays & (UINT64_C(1) << 7))
        weekdays = (weekdays | 1) & ~(UINT64_C(1) << 7);  // 7 is Sunday too
    r.expr.weekdays = static_cast<uint8_t>(weekdays);
    r.expr.days_star = starts[day_field][0] == '*';
    r.expr.weekdays_star = starts[day_field + 2][0] == '*';
    r.ok = true;
    return r;
}

int first_bit_from(uint64_t mask, int from, int hi)
{
    for (int v = from; v <= hi; v++)
        if (mask & (UINT64_C(1) << v))
            return v;
    return -1;
}

bool day_allowed(const cron_expr& e, int year, int month, int day)
{
    bool by_day = e.days & (UINT32_C(1) << day);
    bool by_weekday = e.weekdays & (1u << weekday_of(year, month, day));
    return (e.days_star || e.weekdays_star) ? (by_day && by_weekday) : (by_day || by_weekday);
}

}  // namespace

int64_t days_from_civil(int year, int month, int day) noexcept
{
    int64_t y = year - (month <= 2 ? 1 : 0);
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t year_of_era = y - era * 400;
    int64_t day_of_year = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1;
    int64_t day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    return era * 146097 + day_of_era - 719468;
}

int weekday_of(int year, int month, int day) noexcept
{
    int64_t w = (days_from_civil(year, month, day) + 4) % 7;  // 1970-01-01 was a Thursday
    return static_cast<int>(w < 0 ? w + 7 : w);
}

int days_in_month(int year, int month) noexcept
{
    static const int k_days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    return month == 2 && leap ? 29 : k_days[month - 1];
}

cron_parse_result parse_cron(const char* text) noexcept
{
    size_t len = strlen(text);
    while (len > 0 && is_blank(text[len - 1]))
        len--;
    while (len > 0 && is_blank(*text)) {
        text++;
        len--;
    }
    if (len == 0) {
        cron_parse_result r;
        memset(&r, 0, sizeof r);
        snprintf(r.error, sizeof r.error, "cron expression is empty");
        return r;
    }
    if (text[0] != '@')
        return parse_fields(text, len);

    size_t word = 0;
    while (word < len && !is_blank(text[word]))
        word++;
    if (equals_ignoring_case(text, word, "@every")) {
        cron_parse_result r;
        memset(&r, 0, sizeof r);
        r.ok = parse_every(text + word, len - word, &r.expr.every_seconds, r.error, sizeof r.error);
        return r;
    }
    for (const alias& a : k_aliases)
        if (equals_ignoring_case(text, word, a.name)) {
            if (word != len) {
                cron_parse_result r;
                memset(&r, 0, sizeof r);
                snprintf(r.error, sizeof r.error, "unexpected text after %s", a.name);
                return r;
            }
            return parse_fields(a.expression, strlen(a.expression));
        }
    cron_parse_result r;
    memset(&r, 0, sizeof r);
    snprintf(r.error, sizeof r.error,
             "unknown cron alias \"%.*s\" (known: @yearly, @annually, @monthly, @weekly, @daily, @midnight, "
             "@hourly, @every)",
             word > 64 ? 64 : static_cast<int>(word), text);
    return r;
}

bool cron_ever_fires(const cron_expr& e, char* why, size_t why_len) noexcept
{
    if (e.every_seconds > 0)
        return true;
    for (int month = 1; month <= 12; month++) {
        if (!(e.months & (1u << month)))
            continue;
        // Both day fields restricted: either allows a day, and every month has every weekday.
        if (!e.days_star && !e.weekdays_star)
            return true;
        // Otherwise a day of the month must exist (February 29 does in leap years); each date falls on
        // every weekday within the 400-year cycle.
        int longest = month == 2 ? 29 : days_in_month(2001, month);
        for (int day = 1; day <= longest; day++)
            if (e.days & (UINT32_C(1) << day))
                return true;
    }
    snprintf(why, why_len, "No month it allows has a day of the month it allows.");
    return false;
}

bool next_wall_time(const cron_expr& e, const wall_time& after, wall_time* next) noexcept
{
    int y = after.year, mo = after.month, d = after.day, h = after.hour, mi = after.minute, s = after.second + 1;
    const int last_year = after.year + k_search_years;
    // Carries: a field that ran past its end starts the next unit at its first value.
    auto next_day = [&] {
        d++;
        h = mi = s = 0;
        if (d > days_in_month(y, mo)) {
            d = 1;
            if (++mo > 12) {
                mo = 1;
                y++;
            }
        }
    };
    auto next_hour = [&] {
        mi = s = 0;
        if (++h > 23)
            next_day();
    };
    auto next_minute = [&] {
        s = 0;
        if (++mi > 59)
            next_hour();
    };
    if (s > 59)
        next_minute();
    for (long iterations = 0; iterations < 10000000L; iterations++) {
        if (y > last_year)
            return false;
        if (!(e.months & (1u << mo))) {
            d = 1;
            h = mi = s = 0;
            if (++mo > 12) {
                mo = 1;
                y++;
            }
            continue;
        }
        if (!day_allowed(e, y, mo, d)) {
            next_day();
            continue;
        }
        int hour = first_bit_from(e.hours, h, 23);
        if (hour < 0) {
            next_day();
            continue;
        }
        if (hour != h) {
            h = hour;
            mi = s = 0;
        }
        int minute = first_bit_from(e.minutes, mi, 59);
        if (minute < 0) {
            next_hour();
            continue;
        }
        if (minute != mi) {
            mi = minute;
            s = 0;
        }
        int second = first_bit_from(e.seconds, s, 59);
        if (second < 0) {
            next_minute();
            continue;
        }
        *next = {y, mo, d, h, mi, second};
        return true;
    }
    return false;
}

}  // namespace pgjq
