// cpp-httplib wiring for `gpuplan serve-api` (http_server.h). cpp-httplib lives here only.
#include "http_server.h"

#include <httplib.h>
#include <signal.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "metrics.h"
#include "web_assets.h"

namespace gpuplan::server {

namespace {

// A fixed pool of workers over a bounded queue of accepted connections. When the queue is full
// the accept loop waits (the kernel's listen backlog then holds new clients), so neither threads
// nor memory grow with the number of clients (cpp-httplib's ThreadPool queue is unbounded).
class BoundedPool : public httplib::TaskQueue {
 public:
  BoundedPool(int threads, int capacity) : capacity_(static_cast<size_t>(capacity)) {
    for (int i = 0; i < threads; ++i) workers_.emplace_back([this] { Work(); });
  }
  ~BoundedPool() override = default;

  void enqueue(std::function<void()> fn) override {
    std::unique_lock<std::mutex> lock(mu_);
    not_full_.wait(lock, [&] { return jobs_.size() < capacity_ || stop_; });
    if (stop_) return;
    jobs_.push_back(std::move(fn));
    not_empty_.notify_one();
  }

  void shutdown() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    not_empty_.notify_all();
    not_full_.notify_all();
    for (auto& t : workers_) t.join();  // connections in flight finish first
  }

 private:
  void Work() {
    for (;;) {
      std::function<void()> fn;
      {
        std::unique_lock<std::mutex> lock(mu_);
        not_empty_.wait(lock, [&] { return !jobs_.empty() || stop_; });
        if (jobs_.empty()) return;  // stopping and drained
        fn = std::move(jobs_.front());
        jobs_.pop_front();
        not_full_.notify_one();
      }
      fn();
    }
  }

  const size_t capacity_;
  std::mutex mu_;
  std::condition_variable not_empty_, not_full_;
  std::deque<std::function<void()>> jobs_;
  std::vector<std::thread> workers_;
  bool stop_ = false;
};

const char* kVersionJson = "{\n  \"name\": \"gpuplan\",\n  \"version\": \"" GPUPLAN_VERSION "\"";

}  // namespace

int RunServer(const ApiContext& ctx, const ServerOptions& opt,
              const std::function<void(int)>& on_listening) {
  // Block SIGTERM/SIGINT in every thread; one thread waits for them and stops the server.
  sigset_t sigs;
  sigemptyset(&sigs);
  sigaddset(&sigs, SIGTERM);
  sigaddset(&sigs, SIGINT);
  pthread_sigmask(SIG_BLOCK, &sigs, nullptr);
  signal(SIGPIPE, SIG_IGN);

  httplib::Server svr;
  Metrics metrics;
  svr.new_task_queue = [&opt] { return new BoundedPool(opt.threads, opt.queue); };
  svr.set_tcp_nodelay(opt.tcp_nodelay);
  svr.set_keep_alive_max_count(static_cast<size_t>(opt.keep_alive_max));
  svr.set_keep_alive_timeout(opt.keep_alive_timeout_s);
  svr.set_read_timeout(opt.read_timeout_s, 0);
  svr.set_write_timeout(opt.write_timeout_s, 0);
  svr.set_payload_max_length(opt.max_body_bytes);

  auto timed = [&metrics](const std::string& route, const httplib::Response& res,
                          std::chrono::steady_clock::time_point t0) {
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    metrics.Record(route, res.status, s);
  };
  for (const auto& route : ApiRoutes()) {
    svr.Post(route, [&ctx, &timed, route](const httplib::Request& req, httplib::Response& res) {
      const auto t0 = std::chrono::steady_clock::now();
      std::string query;
      for (const auto& [k, v] : req.params) query += (query.empty() ? "" : "&") + k + "=" + v;
      ApiResponse r = HandleApi(ctx, route, query, req.body);
      res.status = r.status;
      res.set_content(r.body, r.content_type.c_str());
      timed(route, res, t0);
    });
  }
  svr.Get("/healthz", [&timed](const httplib::Request&, httplib::Response& res) {
    const auto t0 = std::chrono::steady_clock::now();
    res.set_content("{\"status\": \"ok\"}\n", "application/json");
    timed("/healthz", res, t0);
  });
  svr.Get("/version", [&ctx, &timed](const httplib::Request&, httplib::Response& res) {
    const auto t0 = std::chrono::steady_clock::now();
    res.set_content(std::string(kVersionJson) + ",\n  \"catalog_as_of\": \"" +
                        ctx.catalog.PricesAsOf() +
                        "\",\n  \"httplib\": \"" CPPHTTPLIB_VERSION "\"\n}\n",
                    "application/json");
    timed("/version", res, t0);
  });
  const std::string models = ModelsJson(), accelerators = AcceleratorsJson(ctx);
  svr.Get("/v1/models", [&models](const httplib::Request&, httplib::Response& res) {
    res.set_content(models, "application/json");
  });
  svr.Get("/v1/accelerators", [&accelerators](const httplib::Request&, httplib::Response& res) {
    res.set_content(accelerators, "application/json");
  });
  svr.Get("/metrics", [&metrics](const httplib::Request&, httplib::Response& res) {
    res.set_content(metrics.Render(), "text/plain; version=0.0.4");
  });
  svr.Get(R"(/[A-Za-z0-9_./-]*)", [&timed](const httplib::Request& req, httplib::Response& res) {
    const auto t0 = std::chrono::steady_clock::now();
    if (const WebAsset* a = FindWebAsset(req.path)) {
      res.set_content(std::string(a->body), std::string(a->content_type).c_str());
      res.set_header("Cache-Control", "no-cache");
      timed("static", res, t0);
      return;
    }
    res.status = 404;
    res.set_content(ErrorJson(MakeError(ErrorCode::kNotFound, "path", "no page " + req.path,
                                        "GET / for the page")),
                    "application/json");
    timed("static", res, t0);
  });
  // Errors the library raises before a handler runs (413 body too large, 400 bad request line,
  // 404/405 for unknown paths or methods) get the API's JSON error body; never a stack trace.
  svr.set_error_handler([&metrics](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;
    Error e =
        res.status == 413
            ? MakeError(ErrorCode::kInvalidArgument, "body", "is larger than the server's cap",
                        "send a smaller job, or start the server with a larger --max-body-bytes")
            : MakeError(ErrorCode::kNotFound, "path",
                        req.method + " " + req.path + " is not served",
                        "POST /v1/...; GET /, /healthz, /version, /metrics");
    res.set_content(ErrorJson(e), "application/json");
    metrics.Record(res.status == 413 ? "body_too_large" : "unrouted", res.status, 0);
  });
  svr.set_exception_handler(
      [](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
        res.status = 500;
        res.set_content(ErrorJson(MakeError(ErrorCode::kInternal, "", "internal error",
                                            "this is a bug; please report the request")),
                        "application/json");
      });

  int port = opt.port;
  if (port == 0) {
    port = svr.bind_to_any_port(opt.host);
    if (port <= 0) return 2;
  } else if (!svr.bind_to_port(opt.host, port)) {
    return 2;
  }
  std::thread waiter([&svr, sigs] {
    int sig = 0;
    sigwait(&sigs, &sig);
    svr.stop();
  });
  if (on_listening) on_listening(port);
  svr.listen_after_bind();
  // listen returned: a signal arrived (or the socket failed); wake the waiter if still waiting.
  pthread_kill(waiter.native_handle(), SIGTERM);
  waiter.join();
  return 0;
}

}  // namespace gpuplan::server
