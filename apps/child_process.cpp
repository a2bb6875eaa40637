// posix_spawn and waitpid, once, for every program dynamix starts.
#include "apps/child_process.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

#include <cerrno>
#include <sstream>

extern char** environ;

namespace dynamix {
namespace {

std::vector<char*> pointers(std::vector<std::string>& words) {
  std::vector<char*> result;
  result.reserve(words.size() + 1);
  for (std::string& word : words) result.push_back(word.data());
  result.push_back(nullptr);
  return result;
}

}  // namespace

int ChildResult::status() const {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return 1;
}

ChildResult run_child(const std::vector<std::string>& command, const ChildOptions& options) {
  std::vector<std::string> arguments = command;
  std::vector<std::string> environment = options.environment;
  std::vector<char*> argv = pointers(arguments);
  std::vector<char*> envp = pointers(environment);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (!options.stdout_path.empty()) {
    posix_spawn_file_actions_addopen(&actions, 1, options.stdout_path.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
  }
  if (!options.stderr_path.empty()) {
    posix_spawn_file_actions_addopen(&actions, 2, options.stderr_path.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
  }
  char** env = options.environment.empty() ? environ : envp.data();
  pid_t child = 0;
  ChildResult result;
  result.start_error = options.search_path
                           ? ::posix_spawnp(&child, argv[0], &actions, nullptr, argv.data(), env)
                           : ::posix_spawn(&child, argv[0], &actions, nullptr, argv.data(), env);
  posix_spawn_file_actions_destroy(&actions);
  if (result.start_error != 0) return result;
  while (::waitpid(child, &result.wait_status, 0) < 0 && errno == EINTR) {
  }
  return result;
}

std::vector<std::string> split_words(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> words;
  for (std::string word; in >> word;) words.push_back(word);
  return words;
}

}  // namespace dynamix
