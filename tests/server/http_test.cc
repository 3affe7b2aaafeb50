// `gpuplan serve-api` over real sockets: health and version, every POST route reachable, 413 for
// an oversized body, a silent client cut off by the read timeout, keep-alive requests not
// stalled by Nagle (TCP_NODELAY), /metrics counts, graceful exit on SIGTERM.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>

#include "server/server_process.h"

namespace gpuplan {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

int Connect(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// Reads until the peer closes or `limit_s` passes; returns what arrived.
std::string ReadAll(int fd, double limit_s, bool* closed, const char* stop_at = nullptr) {
  timeval tv{0, 200000};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  std::string out;
  const auto t0 = Clock::now();
  *closed = false;
  char buf[4096];
  while (std::chrono::duration<double>(Clock::now() - t0).count() < limit_s) {
    ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n == 0) {
      *closed = true;
      break;
    }
    if (n > 0) out.append(buf, static_cast<size_t>(n));
    if (stop_at && out.find(stop_at) != std::string::npos) break;
  }
  return out;
}

const int kN = 20;
const char* kInfer = R"({"model": "Llama-2-7B", "serve": {"qps": 4, "output_len": 128}, "top": 2})";

TEST(HttpTest, EndpointsLimitsMetricsAndShutdown) {
  testing::ServerProcess srv({"--read-timeout-s", "1", "--keep-alive-timeout-s", "1",
                              "--max-body-bytes", "65536", "--threads", "4"});
  ASSERT_GT(srv.port(), 0) << "server did not print its port";
  httplib::Client cli("127.0.0.1", srv.port());
  cli.set_keep_alive(true);
  cli.set_tcp_nodelay(true);

  auto h = cli.Get("/healthz");
  ASSERT_TRUE(h);
  EXPECT_EQ(h->status, 200);
  auto v = cli.Get("/version");
  ASSERT_TRUE(v);
  EXPECT_EQ(json::parse(v->body)["name"], "gpuplan");
  auto page = cli.Get("/");
  ASSERT_TRUE(page);
  EXPECT_NE(page->body.find("<canvas id=\"chart-pareto\""), std::string::npos);
  auto chart = cli.Get("/vendor/chart.min.js");
  ASSERT_TRUE(chart);
  EXPECT_GT(chart->body.size(), 100000u);  // the vendored Chart.js, not a stub

  // Every POST route is wired (an empty object is a 400 naming a field, or a document).
  for (const char* route : {"/v1/plan/train", "/v1/plan/infer", "/v1/tco", "/v1/memory",
                            "/v1/check", "/v1/emit", "/v1/validate", "/v1/simulate"}) {
    auto r = cli.Post(route, "{}", "application/json");
    ASSERT_TRUE(r) << route;
    EXPECT_TRUE(r->status == 400 || r->status == 200) << route << " " << r->status;
    EXPECT_TRUE(json::parse(r->body).is_object()) << route;
  }
  auto bad = cli.Post("/v1/plan/infer", R"({"model": "Llama-2-7B", "serve": {"qps": "lots"}})",
                      "application/json");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400);
  EXPECT_NE(json::parse(bad->body)["field"].get<std::string>().find("serve.qps"),
            std::string::npos);
  auto missing = cli.Get("/nope.html");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);

  for (int i = 0; i < kN; ++i) {
    auto r = cli.Post("/v1/plan/infer", kInfer, "application/json");
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 200);
  }
  // Keep-alive requests are not stalled by Nagle + delayed ACK (~40 ms each without
  // TCP_NODELAY, docs/performance.md): 50 small requests on one connection.
  const auto t0 = Clock::now();
  for (int i = 0; i < 50; ++i) ASSERT_TRUE(cli.Get("/healthz"));
  const double per_request_ms = 1e3 * std::chrono::duration<double>(Clock::now() - t0).count() / 50;
  EXPECT_LT(per_request_ms, 20.0);

  // 413: a body over the cap.
  {
    int fd = Connect(srv.port());
    ASSERT_GE(fd, 0);
    std::string req =
        "POST /v1/plan/train HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        "Content-Length: 200000\r\n\r\n" +
        std::string(200000, ' ');
    send(fd, req.data(), req.size(), MSG_NOSIGNAL);
    bool closed = false;
    std::string resp = ReadAll(fd, 3, &closed, "\r\n\r\n");
    EXPECT_NE(resp.find("HTTP/1.1 413"), std::string::npos) << resp.substr(0, 200);
    close(fd);
  }
  // A client that stops mid-request is disconnected after the read timeout plus the keep-alive
  // idle timeout (1 s + 1 s here).
  {
    int fd = Connect(srv.port());
    ASSERT_GE(fd, 0);
    std::string part = "POST /v1/plan/train HTTP/1.1\r\nHost: x\r\nContent-Le";
    send(fd, part.data(), part.size(), MSG_NOSIGNAL);
    const auto s0 = Clock::now();
    bool closed = false;
    ReadAll(fd, 6, &closed);
    const double waited = std::chrono::duration<double>(Clock::now() - s0).count();
    EXPECT_TRUE(closed) << "slow client not cut off";
    EXPECT_LT(waited, 4.0);
    close(fd);
  }
  // A client that sends a body slower than promised is cut off too.
  {
    int fd = Connect(srv.port());
    ASSERT_GE(fd, 0);
    std::string part =
        "POST /v1/plan/infer HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{\"model\"";
    send(fd, part.data(), part.size(), MSG_NOSIGNAL);
    bool closed = false;
    ReadAll(fd, 6, &closed);
    EXPECT_TRUE(closed);
    close(fd);
  }

  auto m = cli.Get("/metrics");
  ASSERT_TRUE(m);
  const std::string& text = m->body;
  std::smatch sm;
  ASSERT_TRUE(std::regex_search(
      text, sm,
      std::regex(R"(gpuplan_http_requests_total\{route="/v1/plan/infer",code="200"\} (\d+))")))
      << text;
  EXPECT_EQ(std::stoi(sm[1]), kN);
  ASSERT_TRUE(std::regex_search(
      text, sm,
      std::regex(R"(gpuplan_http_requests_total\{route="/v1/plan/infer",code="400"\} (\d+))")));
  EXPECT_EQ(std::stoi(sm[1]), 2);  // the empty body and "lots"
  ASSERT_TRUE(std::regex_search(
      text, sm,
      std::regex(
          R"(gpuplan_http_request_duration_seconds_count\{route="/v1/plan/infer"\} (\d+))")));
  EXPECT_EQ(std::stoi(sm[1]), kN + 2);
  EXPECT_NE(text.find("gpuplan_http_requests_total{route=\"body_too_large\",code=\"413\"} 1"),
            std::string::npos);
  EXPECT_NE(text.find("gpuplan_http_errors_total"), std::string::npos);

  EXPECT_EQ(srv.Stop(), 0) << "no graceful exit on SIGTERM";
}

TEST(HttpTest, ListenErrorsAreBadInput) {
  const std::string cmd =
      std::string(GPUPLAN_BINARY) + " serve-api --listen nonsense >/dev/null 2>&1";
  EXPECT_EQ(WEXITSTATUS(std::system(cmd.c_str())), 2);
}

}  // namespace
}  // namespace gpuplan
