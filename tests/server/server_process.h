// Starts `gpuplan serve-api --listen 127.0.0.1:0 ...` as a child process for a test, reads the
// port it prints, and stops it with SIGTERM (checking that it exits cleanly).
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

namespace gpuplan::testing {

class ServerProcess {
 public:
  explicit ServerProcess(std::vector<std::string> extra = {}) {
    int fds[2];
    if (pipe(fds) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      dup2(fds[1], 1);
      close(fds[0]);
      close(fds[1]);
      std::vector<std::string> args = {GPUPLAN_BINARY, "serve-api", "--listen", "127.0.0.1:0"};
      for (auto& e : extra) args.push_back(e);
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(argv[0], argv.data());
      _exit(127);
    }
    close(fds[1]);
    out_ = fdopen(fds[0], "r");
    char line[512];
    if (out_ && std::fgets(line, sizeof line, out_)) {
      std::string s(line);
      auto p = s.find("127.0.0.1:");
      if (p != std::string::npos) port_ = std::stoi(s.substr(p + 10));
    }
  }
  ~ServerProcess() { Stop(); }
  int port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  // SIGTERM; returns the exit status (0 = graceful), -1 when it had to be killed.
  int Stop() {
    if (pid_ <= 0) return status_;
    kill(pid_, SIGTERM);
    int st = 0;
    for (int i = 0; i < 100; ++i) {  // up to 10 s
      if (waitpid(pid_, &st, WNOHANG) == pid_) {
        status_ = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
        pid_ = 0;
        if (out_) fclose(out_);
        out_ = nullptr;
        return status_;
      }
      usleep(100000);
    }
    kill(pid_, SIGKILL);
    waitpid(pid_, &st, 0);
    pid_ = 0;
    status_ = -1;
    return status_;
  }

 private:
  pid_t pid_ = 0;
  int port_ = 0;
  int status_ = -1;
  FILE* out_ = nullptr;
};

}  // namespace gpuplan::testing
