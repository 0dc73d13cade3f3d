// Cases run as child processes of bench (bench --jobs N): fork/exec, at most N at a time, each with
// its own log; and the command lines a sweep prints (bench --list-cases).
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace mbs {

// One child: the case it runs, its full argument vector (argv[0] is re-executed as /proc/self/exe),
// and the file its stdout and stderr go to.
struct ChildCase {
  std::string case_name;
  std::vector<std::string> argv;
  std::string log;
};

// Runs the children, at most `jobs` at a time; none is started once `interrupted` returns true.
// Returns the cases whose child did not exit 0 or 1 (a crash, a bad option, an interrupt), and those
// never started.
std::vector<std::string> run_children(const std::vector<ChildCase>& children, int jobs,
                                      const std::function<bool()>& interrupted);

// A command line, quoted for a POSIX shell where needed.
std::string shell_join(const std::vector<std::string>& argv);

}  // namespace mbs
