#include "run/children.hpp"

#include <cstdlib>
#include <fcntl.h>
#include <iostream>
#include <map>
#include <sys/wait.h>
#include <unistd.h>

namespace mbs {

std::vector<std::string> run_children(const std::vector<ChildCase>& children, int jobs,
                                      const std::function<bool()>& interrupted) {
  std::vector<std::string> failed;
  std::map<pid_t, std::string> running;
  size_t next = 0;
  auto reap = [&] {
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, 0);
    if (pid <= 0) return;
    const auto it = running.find(pid);
    if (it == running.end()) return;
    if (!WIFEXITED(status) || (WEXITSTATUS(status) != 0 && WEXITSTATUS(status) != 1)) failed.push_back(it->second);
    running.erase(it);
  };
  while (next < children.size() || !running.empty()) {
    if (next < children.size() && static_cast<int>(running.size()) < jobs && !(interrupted && interrupted())) {
      const ChildCase& c = children[next++];
      std::vector<char*> argv;
      for (const std::string& a : c.argv) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      std::cout.flush();
      std::cerr.flush();
      const pid_t pid = ::fork();
      if (pid == 0) {
        const int fd = ::open(c.log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) {
          ::dup2(fd, STDOUT_FILENO);
          ::dup2(fd, STDERR_FILENO);
          ::close(fd);
        }
        ::execv("/proc/self/exe", argv.data());
        std::_Exit(127);
      }
      if (pid < 0) {
        failed.push_back(c.case_name);
        continue;
      }
      running[pid] = c.case_name;
      continue;
    }
    if (running.empty()) break;  // interrupted: nothing more is started
    reap();
  }
  for (; next < children.size(); ++next) failed.push_back(children[next].case_name);
  return failed;
}

std::string shell_join(const std::vector<std::string>& argv) {
  std::string out;
  for (const std::string& a : argv) {
    if (!out.empty()) out += ' ';
    const bool plain = !a.empty() && a.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                                                         "_-./:=,+@%") == std::string::npos;
    if (plain) {
      out += a;
      continue;
    }
    out += '\'';
    for (const char c : a) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    out += '\'';
  }
  return out;
}

}  // namespace mbs
