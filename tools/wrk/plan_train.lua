-- wrk script: POST /v1/plan/train with a LoRA training job (docs/performance.md, issue 17).
wrk.method = "POST"
wrk.path = "/v1/plan/train"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"model": "Llama-2-7B", "train": {"method": "lora", "data": {"tokens": "200M"}}, "constraints": {"clouds": ["aws", "gcp"]}, "top": 3}'
-- wrk counts non-2xx/3xx answers in summary.errors.status.
done = function(summary, latency, requests)
  io.write(string.format("non-200: %d\n", summary.errors.status))
  for _, p in pairs({50, 90, 99, 99.9}) do
    io.write(string.format("p%g: %.2f ms\n", p, latency:percentile(p) / 1000))
  end
end
