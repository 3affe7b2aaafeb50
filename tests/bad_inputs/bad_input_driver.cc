// Runs the bad-input corpus (tests/bad_inputs/cases.jsonl) against the gpuplan binary: each case
// writes its input files into a fresh directory, runs one command there under a timeout and
// checks the contract (docs/reliability.md): no crash (signal), no hang (timeout), no exit 70,
// the expected exit code, a message naming the field for exit 2, and no clobbered file.
//
// Case fields: name, args (argv after "gpuplan"), rc (expected exit), field (substring of
// stderr; required when rc is 2), files {name: text}, gen {name: {prefix, repeat, times,
// suffix}} for large inputs, hex {name: hex bytes}, args "hex:..." for raw bytes, links {name:
// target} (symbolic links), guard {name: text} (files that must be unchanged afterwards), stdout
// ("/dev/full" or "closed"), timeout_s (default 20), stdout_has (substring of stdout).
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string ReadAll(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void WriteAll(const fs::path& p, const std::string& s) {
  fs::create_directories(p.parent_path());
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << s;
}

std::string FromHex(const std::string& h) {
  std::string out;
  for (size_t i = 0; i + 1 < h.size(); i += 2) {
    out.push_back(static_cast<char>(std::stoi(h.substr(i, 2), nullptr, 16)));
  }
  return out;
}

// A member object (or an empty one), by reference: iterating items() of a temporary dangles.
const json& Obj(const json& c, const char* key) {
  static const json kEmpty = json::object();
  auto it = c.find(key);
  return it != c.end() && it->is_object() ? *it : kEmpty;
}

struct RunResult {
  bool timed_out = false;
  int signal = 0;
  int rc = -1;
  std::string out, err;
  double seconds = 0;
};

RunResult Run(const std::string& binary, const std::vector<std::string>& args, const fs::path& cwd,
              const std::string& stdout_mode, int timeout_s) {
  RunResult r;
  const fs::path out_path = cwd / ".stdout", err_path = cwd / ".stderr";
  auto t0 = std::chrono::steady_clock::now();
  pid_t pid = fork();
  if (pid == 0) {
    if (chdir(cwd.c_str()) != 0) _exit(127);
    setpgid(0, 0);
    int e = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(e, 2);
    if (stdout_mode == "closed") {
      close(1);
    } else {
      int o = open(stdout_mode == "/dev/full" ? "/dev/full" : out_path.c_str(),
                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(o, 1);
    }
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(binary.c_str()));
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(binary.c_str(), argv.data());
    _exit(127);
  }
  int status = 0;
  while (true) {
    pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    auto el = std::chrono::steady_clock::now() - t0;
    if (el > std::chrono::seconds(timeout_s)) {
      kill(-pid, SIGKILL);
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      r.timed_out = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!r.timed_out) {
    if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
    if (WIFEXITED(status)) r.rc = WEXITSTATUS(status);
  }
  if (fs::exists(out_path)) r.out = ReadAll(out_path);
  r.err = ReadAll(err_path);
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: bad_input_driver GPUPLAN_BINARY cases.jsonl [name-filter]\n";
    return 2;
  }
  const std::string binary = fs::absolute(argv[1]).string();
  const std::string filter = argc > 3 ? argv[3] : "";
  std::ifstream in(argv[2]);
  if (!in) {
    std::cerr << "cannot read " << argv[2] << "\n";
    return 2;
  }
  const fs::path root =
      fs::temp_directory_path() / ("gpuplan_bad_inputs_" + std::to_string(getpid()));
  fs::remove_all(root);
  fs::create_directories(root);
  std::string line;
  int n = 0, failed = 0, by_rc[256] = {};
  int lineno = 0;
  double slowest = 0;
  std::string slowest_name;
  while (std::getline(in, line)) {
    ++lineno;
    if (line.empty() || line[0] == '#') continue;
    json c;
    try {
      c = json::parse(line);
    } catch (const std::exception& e) {
      std::cerr << argv[2] << ":" << lineno << ": bad case line: " << e.what() << "\n";
      return 2;
    }
    if (!c.is_object() || !c.contains("args") || !c["args"].is_array()) {
      std::cerr << argv[2] << ":" << lineno << ": a case needs args\n";
      return 2;
    }
    const std::string name = c.value("name", "line " + std::to_string(lineno));
    if (!filter.empty() && name.find(filter) == std::string::npos) continue;
    ++n;
    const fs::path dir = root / std::to_string(n);
    fs::create_directories(dir);
    for (auto& [k, v] : Obj(c, "files").items()) WriteAll(dir / k, v.get<std::string>());
    for (auto& [k, v] : Obj(c, "hex").items()) WriteAll(dir / k, FromHex(v.get<std::string>()));
    for (auto& [k, v] : Obj(c, "gen").items()) {
      std::string s = v.value("prefix", "");
      const std::string rep = v.value("repeat", "");
      const long times = v.value("times", 0L);
      s.reserve(s.size() + rep.size() * static_cast<size_t>(times) + 64);
      for (long i = 0; i < times; ++i) s += rep;
      s += v.value("suffix", "");
      WriteAll(dir / k, s);
    }
    for (auto& [k, v] : Obj(c, "guard").items()) WriteAll(dir / k, v.get<std::string>());
    for (auto& [k, v] : Obj(c, "links").items()) {
      fs::create_directories((dir / k).parent_path());
      fs::create_symlink(v.get<std::string>(), dir / k);
    }
    std::vector<std::string> args;
    for (const auto& a : c.at("args")) {
      const std::string v = a.get<std::string>();
      args.push_back(v.rfind("hex:", 0) == 0 ? FromHex(v.substr(4))
                                             : v);  // raw (invalid UTF-8) bytes
    }
    const int want_rc = c.value("rc", 2);
    RunResult r = Run(binary, args, dir, c.value("stdout", ""), c.value("timeout_s", 20));
    std::vector<std::string> why;
    if (r.timed_out) why.push_back("timed out (hang)");
    if (r.signal != 0) why.push_back("killed by signal " + std::to_string(r.signal) + " (crash)");
    if (r.rc == 70) why.push_back("exit 70 (internal error on user input)");
    if (!r.timed_out && r.signal == 0 && r.rc != want_rc) {
      why.push_back("exit " + std::to_string(r.rc) + ", expected " + std::to_string(want_rc));
    }
    const std::string field = c.value("field", "");
    if (want_rc == 2 && field.empty()) why.push_back("case error: rc 2 needs a field");
    if (!field.empty() && r.err.find(field) == std::string::npos) {
      why.push_back("stderr does not name \"" + field + "\"");
    }
    if (c.contains("stdout_has") &&
        r.out.find(c["stdout_has"].get<std::string>()) == std::string::npos) {
      why.push_back("stdout lacks \"" + c["stdout_has"].get<std::string>() + "\"");
    }
    if (r.err.size() > 8192)
      why.push_back("stderr is " + std::to_string(r.err.size()) + " bytes (echoed input?)");
    for (auto& [k, v] : Obj(c, "guard").items()) {
      std::error_code ec;
      if (!fs::exists(dir / k, ec) || ReadAll(dir / k) != v.get<std::string>()) {
        why.push_back("guarded file " + k + " was changed (clobbered)");
      }
    }
    if (r.rc >= 0 && r.rc < 256) ++by_rc[r.rc];
    if (r.seconds > slowest) slowest = r.seconds, slowest_name = name;
    if (!why.empty()) {
      ++failed;
      std::cout << "FAIL " << name << ":";
      for (const auto& w : why) std::cout << " [" << w << "]";
      std::string e = r.err.substr(0, 300);
      std::cout << "\n     stderr: " << e << "\n";
    }
  }
  fs::remove_all(root);
  std::cout << n << " cases, " << failed << " failed; exits: 0=" << by_rc[0] << " 1=" << by_rc[1]
            << " 2=" << by_rc[2] << " 70=" << by_rc[70] << "; slowest " << slowest << " s ("
            << slowest_name << ")\n";
  return failed == 0 && n > 0 ? 0 : 1;
}
