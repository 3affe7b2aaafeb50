// `gpuplan serve-api`: the API routes (api.h) and the embedded web page over HTTP/1.1 with
// cpp-httplib. Hardened defaults: loopback only, a body size cap (413 above it), read and write
// timeouts (a client that stops sending is cut off), a bounded worker pool with a bounded
// accept queue, TCP_NODELAY and keep-alive, graceful shutdown on SIGTERM/SIGINT.
#pragma once

#include <cstddef>
#include <functional>
#include <string>

#include "api.h"

namespace gpuplan::server {

struct ServerOptions {
  std::string host = "127.0.0.1";  // loopback unless told otherwise
  int port = 8080;                 // 0 = any free port (the chosen one is printed)
  std::size_t max_body_bytes = 1 << 20;
  int read_timeout_s = 5;   // per read: a client silent this long is disconnected
  int write_timeout_s = 5;  // per write: a client not reading this long is disconnected
  int threads = 8;          // worker threads (each serves one connection at a time)
  int queue = 256;  // accepted connections waiting for a worker; the accept loop waits beyond
  int keep_alive_max = 1000;     // requests per connection
  int keep_alive_timeout_s = 5;  // idle keep-alive connections are closed after this (also
                                 // after a timed-out read: a silent client is cut off after
                                 // read_timeout_s + keep_alive_timeout_s)
  bool tcp_nodelay = true;       // Debian's cpp-httplib default is off: ~40 ms per small reply
};

// Serves until SIGTERM or SIGINT (then finishes the requests in flight and returns 0), or
// returns 2 when the address cannot be bound. `on_listening(port)` is called once listening
// (the CLI prints the URL). Blocks the calling thread; installs its own signal handling.
int RunServer(const ApiContext& ctx, const ServerOptions& opt,
              const std::function<void(int)>& on_listening);

}  // namespace gpuplan::server
