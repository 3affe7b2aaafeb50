// gpuplan serve-api: the HTTP/JSON API and the web page (apps/server). Flags map to
// ServerOptions; the catalog is loaded once here (--catalog overrides only at start-up).
#include <cstdio>
#include <fmt/format.h>
#include <memory>
#include <tuple>

#include "commands.h"
#include "gpuplan/input.h"
#include "http_server.h"

namespace gpuplan::cli {

namespace {

struct ServeApiArgs {
  std::string listen = "127.0.0.1:8080";
  server::ServerOptions opt;
};

Result<Output> RunServeApi(const GlobalOptions& g, ServeApiArgs a) {
  const auto colon = a.listen.rfind(':');
  if (colon == std::string::npos || colon == 0) {
    return MakeError(ErrorCode::kInvalidArgument, "--listen",
                     "expected HOST:PORT, got " + Excerpt(a.listen),
                     "e.g. 127.0.0.1:8080 (0.0.0.0:8080 listens on every interface)");
  }
  a.opt.host = a.listen.substr(0, colon);
  const std::string port = a.listen.substr(colon + 1);
  try {
    size_t used = 0;
    a.opt.port = std::stoi(port, &used);
    if (used != port.size() || a.opt.port < 0 || a.opt.port > 65535)
      throw std::out_of_range("port");
  } catch (...) {
    return MakeError(ErrorCode::kInvalidArgument, "--listen",
                     "port must be 0-65535, got " + Excerpt(port), "0 picks a free port");
  }
  for (auto [v, flag, lo, hi] : {std::tuple{a.opt.threads, "--threads", 1, 256},
                                 {a.opt.queue, "--queue", 1, 65536},
                                 {a.opt.read_timeout_s, "--read-timeout-s", 1, 3600},
                                 {a.opt.write_timeout_s, "--write-timeout-s", 1, 3600},
                                 {a.opt.keep_alive_timeout_s, "--keep-alive-timeout-s", 1, 3600}}) {
    if (v < lo || v > hi) {
      return MakeError(ErrorCode::kInvalidArgument, flag,
                       fmt::format("must be in [{}, {}], got {}", lo, hi, v));
    }
  }
  if (a.opt.max_body_bytes < 1024 || a.opt.max_body_bytes > (64u << 20)) {
    return MakeError(ErrorCode::kInvalidArgument, "--max-body-bytes",
                     fmt::format("must be in [1024, {}], got {}", 64u << 20, a.opt.max_body_bytes));
  }
  auto cat = LoadCatalog(g);
  if (!cat) return cat.error();
  if (auto cur = DisplayCurrency(g); !cur) return cur.error();
  auto ctx = std::make_unique<server::ApiContext>();
  ctx->catalog = std::move(*cat);
  ctx->cny_per_usd = g.cny_per_usd;
  ctx->currency = g.currency;
  const int rc = server::RunServer(*ctx, a.opt, [&a](int bound_port) {
    std::printf("gpuplan serve-api: listening on http://%s:%d/ (API under /v1, page at /)\n",
                a.opt.host.c_str(), bound_port);
    std::fflush(stdout);
  });
  if (rc != 0) {
    return MakeError(ErrorCode::kIo, "--listen", "cannot listen on " + a.listen,
                     "is the port in use? pick another, or 0 for any free port");
  }
  Output out;
  out.text = "gpuplan serve-api: stopped\n";
  return out;
}

}  // namespace

void RegisterServeApiCommand(CLI::App& app, GlobalOptions& g, Runner& run) {
  auto a = std::make_shared<ServeApiArgs>();
  auto* c =
      app.add_subcommand("serve-api", "Serve the HTTP/JSON API and the web page (docs/api.md)");
  c->add_option("--listen", a->listen, "HOST:PORT (loopback by default; port 0 = any free port)")
      ->capture_default_str();
  c->add_option("--max-body-bytes", a->opt.max_body_bytes, "Largest request body; larger gets 413")
      ->capture_default_str();
  c->add_option("--read-timeout-s", a->opt.read_timeout_s,
                "Disconnect a client silent this long while sending")
      ->capture_default_str();
  c->add_option("--write-timeout-s", a->opt.write_timeout_s,
                "Disconnect a client not reading this long")
      ->capture_default_str();
  c->add_option("--keep-alive-timeout-s", a->opt.keep_alive_timeout_s,
                "Close a keep-alive connection idle this long")
      ->capture_default_str();
  c->add_flag("--no-tcp-nodelay{false}", a->opt.tcp_nodelay,
              "Leave Nagle's algorithm on (cpp-httplib's default; for measurements only)");
  c->add_option("--threads", a->opt.threads, "Worker threads")->capture_default_str();
  c->add_option("--queue", a->opt.queue, "Accepted connections waiting for a worker")
      ->capture_default_str();
  c->callback([&g, &run, a] { run = [&g, a] { return RunServeApi(g, *a); }; });
}

}  // namespace gpuplan::cli
