// help_formats.cpp: the manual page and the completion scripts, written from the command tree (see
// help_formats.hpp). Both walk the same tree: every visible command, its options and positional arguments.
#include "help_formats.hpp"

#include <sstream>
#include <vector>

namespace pgjq::cli
{

namespace
{

struct command_node
{
  std::string path; // "queue alter"; empty for pgjq itself
  const CLI::App *app;
};

// Every visible command under app, depth first (CLI11 hides a command by giving it no group).
void collect(const CLI::App *app, const std::string &path, std::vector<command_node> &out)
{
  out.push_back({path, app});
  for (const CLI::App *sub : app->get_subcommands([](const CLI::App *a) { return !a->get_group().empty(); }))
    collect(sub, path.empty() ? sub->get_name() : path + ' ' + sub->get_name(), out);
}

std::vector<command_node> command_tree(const CLI::App &app)
{
  std::vector<command_node> out;
  collect(&app, "", out);
  return out;
}

std::vector<const CLI::Option *> named_options(const CLI::App *app)
{
  return app->get_options([](const CLI::Option *o) { return o->nonpositional(); });
}

std::vector<const CLI::Option *> positionals(const CLI::App *app)
{
  return app->get_options([](const CLI::Option *o) { return !o->nonpositional(); });
}

std::vector<std::string> names_of(const CLI::Option *o)
{
  std::vector<std::string> out;
  for (const std::string &s : o->get_snames())
    out.push_back('-' + s);
  for (const std::string &l : o->get_lnames())
    out.push_back("--" + l);
  return out;
}

bool takes_value(const CLI::Option *o) { return o->get_expected_max() > 0; }

// The options a command takes: its own, and (main.cpp's fallthrough) pgjq's global ones after it.
std::vector<const CLI::Option *> options_of(const CLI::App &root, const command_node &node)
{
  std::vector<const CLI::Option *> out = named_options(node.app);
  if (node.app != &root)
    for (const CLI::Option *o : named_options(&root))
      if (o != root.get_help_ptr() && o != root.get_version_ptr())
        out.push_back(o);
  return out;
}

// ---- roff -------------------------------------------------------------------------------------------

// Text as roff reads it literally: backslashes and hyphens escaped, no line starting a request.
std::string roff(const std::string &text)
{
  std::string out;
  bool line_start = true;
  for (char c : text)
  {
    if (line_start && (c == '.' || c == '\''))
      out += "\\&";
    if (c == '\\')
      out += "\\e";
    else if (c == '-')
      out += "\\-";
    else
      out += c;
    line_start = c == '\n';
  }
  return out;
}

void option_entry(std::ostringstream &man, const CLI::Option *o)
{
  man << ".TP\n";
  std::string names;
  for (const std::string &n : names_of(o))
    names += (names.empty() ? "\\fB" : "\\fR, \\fB") + roff(n);
  man << names << "\\fR";
  if (takes_value(o))
  {
    // CLI11 appends its checks to the type ("INT:INT in [1 - 10000]"); the description says the bounds.
    const std::string type = o->get_type_name();
    man << " \\fI" << roff(type.substr(0, type.find(':'))) << "\\fR";
  }
  man << '\n' << roff(o->get_description()) << '\n';
}

// ---- shell ------------------------------------------------------------------------------------------

// A word in single quotes, for either shell.
std::string quoted(const std::string &text)
{
  std::string out = "'";
  for (char c : text)
    out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string joined(const std::vector<std::string> &words)
{
  std::string out;
  for (const std::string &w : words)
    out += (out.empty() ? "" : " ") + w;
  return out;
}

// A shell function `name` answering, for a command path, the words `of` gives that command.
void case_function(std::ostringstream &script, const std::string &name, const std::vector<command_node> &tree,
                   const std::function<std::string(const command_node &)> &of)
{
  script << name << "() {\n  case \"$1\" in\n";
  for (const command_node &node : tree)
    script << "    " << quoted(node.path) << ") " << of(node) << " ;;\n";
  script << "  esac\n}\n";
}

void shared_functions(std::ostringstream &script, const CLI::App &app, const std::vector<command_node> &tree)
{
  case_function(script, "_pgjq_commands", tree,
                [](const command_node &node)
                {
                  std::vector<std::string> names;
                  for (const command_node &sub : command_tree(*node.app))
                    if (sub.app != node.app && sub.path.find(' ') == std::string::npos)
                      names.push_back(sub.path);
                  return "echo " + quoted(joined(names));
                });
  case_function(script, "_pgjq_valued", tree,
                [&](const command_node &node)
                {
                  std::vector<std::string> names;
                  for (const CLI::Option *o : options_of(app, node))
                    if (takes_value(o))
                      for (const std::string &n : names_of(o))
                        names.push_back(n);
                  return "echo " + quoted(joined(names));
                });
}

// The words a command offers next, subcommands first: (word, description).
std::vector<std::pair<std::string, std::string>> offered(const CLI::App &app, const command_node &node)
{
  std::vector<std::pair<std::string, std::string>> out;
  for (const command_node &sub : command_tree(*node.app))
    if (sub.app != node.app && sub.path.find(' ') == std::string::npos)
      out.emplace_back(sub.path, sub.app->get_description());
  for (const CLI::Option *o : options_of(app, node))
    for (const std::string &n : names_of(o))
      out.emplace_back(n, o->get_description());
  return out;
}

std::string bash_script(const CLI::App &app)
{
  const std::vector<command_node> tree = command_tree(app);
  std::ostringstream script;
  script << "# bash completion for pgjq, written by `pgjq completion bash` from its --help.\n";
  shared_functions(script, app, tree);
  case_function(script, "_pgjq_words", tree,
                [&](const command_node &node)
                {
                  std::vector<std::string> words;
                  for (const auto &[word, description] : offered(app, node))
                    words.push_back(word);
                  return "echo " + quoted(joined(words));
                });
  script << R"SH(_pgjq() {
  local cur=${COMP_WORDS[COMP_CWORD]} cmd_path='' w i
  COMPREPLY=()
  for ((i = 1; i < COMP_CWORD; i++)); do
    w=${COMP_WORDS[i]}
    if [[ " $(_pgjq_valued "$cmd_path") " == *" $w "* ]]; then
      ((i == COMP_CWORD - 1)) && return 0 # the word being typed is that option's value
      ((i++))
    elif [[ " $(_pgjq_commands "$cmd_path") " == *" $w "* ]]; then
      cmd_path=${cmd_path:+$cmd_path }$w
    fi
  done
  COMPREPLY=($(compgen -W "$(_pgjq_words "$cmd_path")" -- "$cur"))
}
complete -F _pgjq pgjq
)SH";
  return script.str();
}

std::string zsh_script(const CLI::App &app)
{
  const std::vector<command_node> tree = command_tree(app);
  std::ostringstream script;
  script << "#compdef pgjq\n# zsh completion for pgjq, written by `pgjq completion zsh` from its --help.\n";
  shared_functions(script, app, tree);
  case_function(script, "_pgjq_described", tree,
                [&](const command_node &node)
                {
                  std::string lines;
                  for (const auto &[word, description] : offered(app, node))
                  {
                    std::string escaped;
                    for (char c : word)
                      escaped += c == ':' ? std::string("\\:") : std::string(1, c);
                    lines += (lines.empty() ? "" : " ") + quoted(escaped + ':' + description);
                  }
                  return "print -rl -- " + lines;
                });
  script << R"SH(_pgjq() {
  local cmd_path='' w i
  local -a described
  for ((i = 2; i < CURRENT; i++)); do
    w=${words[i]}
    if [[ " $(_pgjq_valued "$cmd_path") " == *" $w "* ]]; then
      ((i == CURRENT - 1)) && return 1 # the word being typed is that option's value
      ((i++))
    elif [[ " $(_pgjq_commands "$cmd_path") " == *" $w "* ]]; then
      cmd_path=${cmd_path:+$cmd_path }$w
    fi
  done
  described=("${(@f)$(_pgjq_described "$cmd_path")}")
  _describe -t pgjq pgjq described
}
if [[ ${zsh_eval_context[-1]} == loadautofunc ]]; then
  _pgjq "$@"
else
  compdef _pgjq pgjq
fi
)SH";
  return script.str();
}

} // namespace

std::string manual_page(const CLI::App &app)
{
  std::ostringstream man;
  const std::string description = app.get_description();
  const std::size_t first_line_end = description.find('\n');
  std::string summary = description.substr(0, first_line_end);
  if (summary.rfind("pgjq: ", 0) == 0)
    summary = summary.substr(6);
  man << ".TH PGJQ 1 \"\" \"pgjq " << PGJQ_VERSION << "\" \"pgjq manual\"\n"
      << ".SH NAME\npgjq \\- " << roff(summary) << '\n'
      << ".SH SYNOPSIS\n.B pgjq\n\\fIcommand\\fR [\\fIoptions\\fR] [\\fIarguments\\fR]\n"
      << ".SH DESCRIPTION\n";
  std::istringstream lines(first_line_end == std::string::npos ? std::string()
                                                               : description.substr(first_line_end + 1));
  for (std::string line; std::getline(lines, line);)
    man << ".PP\n" << roff(line) << '\n';
  man << ".SH OPTIONS\nThese go before or after the command.\n";
  for (const CLI::Option *o : named_options(&app))
    option_entry(man, o);
  man << ".SH COMMANDS\n";
  for (const command_node &node : command_tree(app))
  {
    if (node.app == &app ||
        !node.app->get_subcommands([](const CLI::App *a) { return !a->get_group().empty(); }).empty())
    {
      if (node.app != &app)
        man << ".SS \"pgjq " << roff(node.path) << " \\fIcommand\\fR\"\n" << roff(node.app->get_description()) << '\n';
      continue;
    }
    man << ".SS \"pgjq " << roff(node.path);
    for (const CLI::Option *p : positionals(node.app))
      man << (p->get_required() ? " \\fI" : " [\\fI") << roff(p->get_name()) << (p->get_required() ? "\\fR" : "\\fR]");
    man << "\"\n" << roff(node.app->get_description()) << '\n';
    for (const CLI::Option *p : positionals(node.app))
      man << ".TP\n\\fI" << roff(p->get_name()) << "\\fR\n" << roff(p->get_description()) << '\n';
    for (const CLI::Option *o : named_options(node.app))
      if (o != node.app->get_help_ptr())
        option_entry(man, o);
  }
  man << ".SH SEE ALSO\n.BR psql (1);\nthe command line's page of the pgjq manual, docs/cli.md\n";
  return man.str();
}

std::string completion_script(const CLI::App &app, const std::string &shell)
{
  return shell == "zsh" ? zsh_script(app) : bash_script(app);
}

} // namespace pgjq::cli
