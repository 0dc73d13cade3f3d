// Running the bench executable as a user would, for tests of its exit codes and output.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <utility>

namespace mbs::testing {

// Runs a shell command; returns its exit code (-1: killed) and its stdout and stderr together.
inline std::pair<int, std::string> run_command(const std::string& cmd) {
  namespace fs = std::filesystem;
  const std::string log = (fs::temp_directory_path() / ("mbs_test_shell_" + std::to_string(::getpid()))).string();
  const int status = std::system((cmd + " > " + log + " 2>&1").c_str());
  std::ifstream in(log);
  std::stringstream ss;
  ss << in.rdbuf();
  fs::remove(log);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, ss.str()};
}

inline std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace mbs::testing
