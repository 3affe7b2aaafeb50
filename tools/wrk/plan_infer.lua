-- wrk script: POST /v1/plan/infer with a small serving job (docs/performance.md, issue 17).
wrk.method = "POST"
wrk.path = "/v1/plan/infer"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"model": "Llama-2-7B", "serve": {"qps": 4, "input_len": 512, "output_len": 128}, "slo": {"ttft_p99_ms": 2000, "tpot_p99_ms": 100}, "top": 3}'
-- wrk counts non-2xx/3xx answers in summary.errors.status.
done = function(summary, latency, requests)
  io.write(string.format("non-200: %d\n", summary.errors.status))
  for _, p in pairs({50, 90, 99, 99.9}) do
    io.write(string.format("p%g: %.2f ms\n", p, latency:percentile(p) / 1000))
  end
end
