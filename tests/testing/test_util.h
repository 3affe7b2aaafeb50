// Shared helpers for tests: substring checks, whole-file reads, scratch directories, and running
// the gpuplan CLI as a subprocess (no shell; stdout/stderr captured; killed after a timeout).
// Header-only; every test binary compiles it with its own GPUPLAN_BINARY definition.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace gpuplan::test {

inline bool Has(std::string_view s, std::string_view part) {
  return s.find(part) != std::string_view::npos;
}

// One infer_throughput case line (SCHEMA.md) for Llama-2-7B on one A100 80 GB under TensorRT-LLM,
// 128 in / 128 out tokens offline, attributed to `source`: cross-validation tests give two
// sources measurements of the same setup.
inline std::string ServeCaseJsonl(const std::string& id, const std::string& source,
                                  double measured) {
  return "{\"id\":\"" + id +
         "\",\"kind\":\"infer_throughput\",\"model\":{\"preset\":\"Llama-2-7B\"},"
         "\"hardware\":{\"gpu\":\"A100-SXM4-80GB\",\"gpus\":1},"
         "\"workload\":{\"infer\":{\"precision\":\"fp16\",\"tp\":1,\"input_len\":128,"
         "\"output_len\":128,\"scenario\":\"offline\",\"engine\":\"trt-llm\"}},"
         "\"metric\":\"output_tokens_per_s\",\"measured\":" +
         std::to_string(measured) + ",\"source\":\"" + source + "\"}\n";
}

inline std::string Slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A scratch directory removed at the end of its scope; unique per process, test and instance.
class TempDir {
 public:
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name =
        "gpuplan_test_" + std::to_string(::getpid()) + "_" +
        (info ? std::string(info->test_suite_name()) + "_" + info->name() : std::string("x")) +
        "_" + std::to_string(counter_++);
    for (char& c : name) {
      if (c == '/') c = '_';
    }
    path_ = std::filesystem::temp_directory_path() / name;
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  // Writes `text` to `rel` inside the directory; returns the full path.
  std::string Write(const std::string& rel, const std::string& text) const {
    std::filesystem::path p = path_ / rel;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream out(p, std::ios::binary);
    out << text;
    return p.string();
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  static inline int counter_ = 0;  // several directories per test (RunCli makes one per run)
  std::filesystem::path path_;
};

struct RunResult {
  int exit_code = -1;  // -1: killed by a signal or timed out
  std::string out;
  std::string err;
  std::string Describe() const {
    return "exit " + std::to_string(exit_code) + "\n--- stdout ---\n" + out.substr(0, 3000) +
           "\n--- stderr ---\n" + err.substr(0, 2000);
  }
};

#ifdef GPUPLAN_BINARY
// Runs the CLI with `args` (no shell), stdout and stderr to files; kills it after `timeout_s`.
inline RunResult RunCli(const std::vector<std::string>& args, int timeout_s = 20) {
  TempDir io;
  const std::string out_path = (io.path() / "stdout").string();
  const std::string err_path = (io.path() / "stderr").string();
  std::vector<std::string> argv_s = {GPUPLAN_BINARY};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);

  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, out_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, err_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  RunResult r;
  if (rc != 0) {
    ADD_FAILURE() << "cannot start " << GPUPLAN_BINARY << ": error " << rc;
    return r;
  }
  int status = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  for (;;) {
    const pid_t w = ::waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    if (w < 0) {
      ADD_FAILURE() << "waitpid failed";
      return r;
    }
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      ADD_FAILURE() << "gpuplan timed out";
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  r.out = Slurp(out_path);
  r.err = Slurp(err_path);
  return r;
}
#endif

}  // namespace gpuplan::test
