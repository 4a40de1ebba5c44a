// rounds.cpp: see rounds.hpp.
#include "rounds.hpp"

#include <algorithm>
#include <cstdio>
#include <exception>
#include <map>
#include <utility>

namespace pgjq::bench
{

namespace
{

// The scenarios write "N jobs, 1 runs" for a round; the folded figure names the rounds it has.
std::string folded_note(std::string note, int runs)
{
  const std::string one = ", 1 runs";
  if (note.size() >= one.size() && note.compare(note.size() - one.size(), one.size(), one) == 0)
    note.resize(note.size() - one.size());
  return note + (note.empty() ? "" : ", ") + std::to_string(runs) + " runs alternated with the other system";
}

} // namespace

void run_guarded(const char *name, scenario_fn run, driver &d, const config &c, results &run_into, results &r,
                 int round)
{
  try
  {
    run(d, c, run_into);
  }
  catch (const std::exception &e)
  {
    const std::string where = round > 0 ? " round " + std::to_string(round) : "";
    std::fprintf(stderr, "  [%s] scenario %s%s failed: %s\n", d.name().c_str(), name, where.c_str(), e.what());
    r.notes.push_back(std::string("scenario ") + name + where + " failed for " + d.name() + ": " + e.what());
  }
}

void run_in_rounds(const char *name, scenario_fn run, const std::vector<driver *> &drivers, const config &c, results &r)
{
  config one = c;
  one.runs = 1;
  std::vector<results> rounds(static_cast<std::size_t>(std::max(c.runs, 0)));
  for (int k = 0; k < c.runs; ++k)
  {
    std::fprintf(stderr, "   round %d of %d\n", k + 1, c.runs);
    std::vector<driver *> order = drivers;
    if (k % 2 == 1)
      order.assign(drivers.rbegin(), drivers.rend());
    for (driver *d : order)
      run_guarded(name, run, *d, one, rounds[static_cast<std::size_t>(k)], r, k + 1);
  }

  // One summary per (figure, system), in the order the first round that has it wrote it; the first
  // driver's figures come first because round 1 runs it first.
  std::vector<std::pair<figure, std::vector<double>>> folded;
  std::map<std::pair<std::string, std::string>, std::size_t> at;
  for (const results &round : rounds)
    for (const figure &f : round.figures)
    {
      const auto key = std::make_pair(f.id, f.system);
      auto it = at.find(key);
      if (it == at.end())
      {
        it = at.emplace(key, folded.size()).first;
        folded.emplace_back(f, std::vector<double>{});
      }
      folded[it->second].second.push_back(f.value.median);
    }
  for (auto &[f, values] : folded)
  {
    f.note = folded_note(f.note, static_cast<int>(values.size()));
    r.add(f.id, f.label, f.unit, f.higher_is_better, f.system, summarize(values), f.note);
  }
  for (const results &round : rounds)
    r.notes.insert(r.notes.end(), round.notes.begin(), round.notes.end());
}

} // namespace pgjq::bench
