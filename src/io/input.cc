// The input contract: file size caps, safe excerpts of user text, UTF-8 repair, identifier
// checks and the one validation of training and serving jobs (docs/reliability.md).
#include "gpuplan/input.h"

#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <sys/stat.h>

#include "gpuplan/job.h"
#include "gpuplan/serve_planner.h"

namespace gpuplan {

Result<std::string> ReadInputFile(const std::string& path, std::string_view field,
                                  std::uint64_t max_bytes) {
  const std::string f(field);
  if (path.empty()) return MakeError(ErrorCode::kInvalidArgument, f, "is empty", "give a file path");
  if (path.size() > 4096 || path.find('\0') != std::string::npos) {
    return MakeError(ErrorCode::kInvalidArgument, f, "path is not a valid file name: " + Excerpt(path));
  }
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    return MakeError(ErrorCode::kIo, f, "cannot read " + Excerpt(path) + ": " + std::strerror(errno),
                     "check the path");
  }
  if (S_ISDIR(st.st_mode)) {
    return MakeError(ErrorCode::kIo, f, Excerpt(path) + " is a directory", "give a file");
  }
  if (S_ISREG(st.st_mode) && static_cast<std::uint64_t>(st.st_size) > max_bytes) {
    return MakeError(ErrorCode::kInvalidArgument, f,
                     fmt::format("{} has {} bytes, more than the limit of {} bytes", Excerpt(path),
                                 st.st_size, max_bytes),
                     "see docs/reliability.md for the input limits");
  }
  std::FILE* in = std::fopen(path.c_str(), "rb");
  if (in == nullptr) {
    return MakeError(ErrorCode::kIo, f, "cannot read " + Excerpt(path) + ": " + std::strerror(errno),
                     "check the path and its permissions");
  }
  std::string out;
  char buf[65536];
  bool too_big = false, failed = false;
  while (true) {
    size_t n = std::fread(buf, 1, sizeof buf, in);
    if (n > 0) {
      if (out.size() + n > max_bytes) {
        too_big = true;
        break;
      }
      out.append(buf, n);
    }
    if (n < sizeof buf) {
      failed = std::ferror(in) != 0;
      break;
    }
  }
  std::fclose(in);
  if (too_big) {
    return MakeError(ErrorCode::kInvalidArgument, f,
                     fmt::format("{} is larger than the limit of {} bytes", Excerpt(path), max_bytes),
                     "see docs/reliability.md for the input limits");
  }
  if (failed) return MakeError(ErrorCode::kIo, f, "error while reading " + Excerpt(path));
  return out;
}

namespace {

// Length of the valid UTF-8 sequence at s[i], or 0 when invalid (overlongs, surrogates and
// code points above U+10FFFF are invalid).
size_t Utf8SeqLen(std::string_view s, size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  if (c < 0x80) return c == 0 ? 0 : 1;
  size_t n = 0;
  unsigned min = 0;
  unsigned cp = 0;
  if ((c & 0xE0) == 0xC0) {
    n = 2, cp = c & 0x1F, min = 0x80;
  } else if ((c & 0xF0) == 0xE0) {
    n = 3, cp = c & 0x0F, min = 0x800;
  } else if ((c & 0xF8) == 0xF0) {
    n = 4, cp = c & 0x07, min = 0x10000;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    const auto cc = static_cast<unsigned char>(s[i + k]);
    if ((cc & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (cc & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return n;
}

}  // namespace

bool IsValidUtf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    size_t n = Utf8SeqLen(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::string SanitizeUtf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    size_t n = Utf8SeqLen(s, i);
    if (n == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  return out;
}

std::string Excerpt(std::string_view s, std::size_t max) {
  std::string out = "\"";
  size_t i = 0;
  for (; i < s.size() && out.size() < max + 1;) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7F) {
      out += fmt::format("\\x{:02x}", c);
      ++i;
      continue;
    }
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
      ++i;
      continue;
    }
    size_t n = Utf8SeqLen(s, i);
    if (n == 0) {
      out += "\\ufffd";
      ++i;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  out += "\"";
  if (i < s.size()) out += fmt::format("... ({} bytes)", s.size());
  return out;
}

bool IsSafeIdentifier(std::string_view s) {
  if (s.empty() || s.size() > kMaxIdentifierBytes || s[0] == '-') return false;
  for (char c : s) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == ':' || c == '/' || c == '@' || c == '+' ||
                    c == '=' || c == '-';
    if (!ok) return false;
  }
  return true;
}

Status CheckIdentifier(std::string_view s, std::string_view field) {
  if (IsSafeIdentifier(s)) return {};
  return MakeError(ErrorCode::kInvalidArgument, std::string(field),
                   "must be 1-" + std::to_string(kMaxIdentifierBytes) +
                       " characters of A-Z a-z 0-9 . _ : / @ + = - (not starting with -), got " +
                       Excerpt(s),
                   "identifiers reach shell scripts and YAML files; remove spaces, quotes, "
                   "newlines and shell characters");
}

bool IsSafeName(std::string_view s) {
  if (s.empty() || s.size() > kMaxIdentifierBytes || s[0] == '-' || s[0] == ' ' || s.back() == ' ') {
    return false;
  }
  for (char c : s) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == ':' || c == '/' || c == '@' || c == '+' ||
                    c == '=' || c == '-' || c == ' ' || c == '(' || c == ')' || c == ',';
    if (!ok) return false;
  }
  return true;
}

Status CheckName(std::string_view s, std::string_view field) {
  if (IsSafeName(s)) return {};
  return MakeError(ErrorCode::kInvalidArgument, std::string(field),
                   "must be 1-" + std::to_string(kMaxIdentifierBytes) +
                       " characters of A-Z a-z 0-9 . _ : / @ + = - space ( ) , got " + Excerpt(s),
                   "names reach shell scripts and YAML files; remove quotes, newlines, $ and "
                   "other shell characters");
}

std::string FieldKey(std::string_view key) {
  return IsSafeName(key) ? std::string(key) : Excerpt(key);
}

Status CheckRange(std::optional<double> v, std::string_view field, double lo, double hi,
                  bool lo_open) {
  if (!v) return {};
  const double x = *v;
  const bool ok = std::isfinite(x) && (lo_open ? x > lo : x >= lo) && x <= hi;
  if (ok) return {};
  return MakeError(ErrorCode::kInvalidArgument, std::string(field),
                   fmt::format("must be in {}{:g}, {:g}], got {:g}", lo_open ? "(" : "[", lo, hi, x));
}

namespace {

class Namer {
 public:
  Namer(InputSource src, std::string_view label) : src_(src), label_(label) {}
  std::string operator()(std::string_view flag, std::string_view yaml_path) const {
    if (src_ == InputSource::kFlags) return std::string(flag);
    return label_.empty() ? std::string(yaml_path)
                          : std::string(label_) + ": " + std::string(yaml_path);
  }

 private:
  InputSource src_;
  std::string_view label_;
};

Status IntRange(long long v, const std::string& field, long long lo, long long hi) {
  if (v >= lo && v <= hi) return {};
  return MakeError(ErrorCode::kInvalidArgument, field,
                   fmt::format("must be in [{}, {}], got {}", lo, hi, v));
}

}  // namespace

Status ValidateTrainJob(const TrainJobSpec& job, InputSource source, std::string_view label) {
  Namer n(source, label);
  if (job.model.name.size() > kMaxNameBytes) {
    return MakeError(ErrorCode::kInvalidArgument, n("--model", "model"),
                     fmt::format("name is longer than {} bytes", kMaxNameBytes));
  }
  if (auto st = IntRange(job.max_nodes, n("--max-nodes", "constraints.max_nodes"), 1, kMaxNodes); !st) return st;
  if (auto st = IntRange(job.seq_len, n("--seq-len", "train.seq_len"), 0, kMaxSeqLen); !st) return st;
  if (auto st = IntRange(job.global_batch, n("--global-batch", "train.global_batch"), 0, kMaxGlobalBatch); !st) return st;
  if (auto st = IntRange(job.top, n("--top", "top"), 1, kMaxTop); !st) return st;
  const bool lora = job.method == TrainMethod::kLora || job.method == TrainMethod::kQlora;
  const long long max_rank = lora && job.model.hidden > 0
                                 ? std::min<long long>(kMaxLoraRank, job.model.hidden)
                                 : kMaxLoraRank;
  if (auto st = IntRange(job.lora_rank, n("--lora-rank", "train.lora_rank"), 1, max_rank); !st) return st;
  if (auto st = CheckRange(job.epochs, n("--epochs", "train.data.epochs"), 0, kMaxEpochs, true); !st) return st;
  if (auto st = CheckRange(job.tokens, n("--tokens", "train.data.tokens"), 0, kMaxTokens); !st) return st;
  if (auto st = CheckRange(job.samples, n("--samples", "train.data.samples"), 0, kMaxSamples); !st) return st;
  if (auto st = CheckRange(job.headroom, n("--headroom", "constraints.headroom"), 0, 1, true); !st) return st;
  if (auto st = CheckRange(job.deadline_hours, n("--deadline", "constraints.deadline"), 0, kMaxHours, true); !st) return st;
  if (auto st = CheckRange(job.budget, n("--budget", "constraints.budget"), 0, kMaxBudget, true); !st) return st;
  if (auto st = CheckRange(job.checkpoint_interval_hours, n("--checkpoint-every", "train.checkpoint_every"), 0, kMaxHours); !st) return st;
  if (auto st = CheckRange(job.dataset.value(), n("--dataset-size", "train.data.dataset_size"), 0, 1e18); !st) return st;
  if (job.min_gpus < 0 || job.max_gpus < 0 || (job.max_gpus > 0 && job.min_gpus > job.max_gpus)) {
    return MakeError(ErrorCode::kInvalidArgument, n("--max-gpus", "constraints.max_gpus"),
                     fmt::format("needs 0 <= min <= max, got min {} max {}", job.min_gpus, job.max_gpus));
  }
  if (job.tokens > 0 && job.samples > 0) {
    return MakeError(ErrorCode::kInvalidArgument, n("--samples", "train.data.samples"),
                     "give either tokens or samples, not both",
                     "tokens for LLMs; samples (with the sequence length) for other models");
  }
  const double total = job.TotalTokens();
  if (!std::isfinite(total) || total > kMaxTokens * kMaxEpochs) {
    return MakeError(ErrorCode::kInvalidArgument, n("--tokens", "train.data.tokens"),
                     fmt::format("the job's size (tokens x epochs) is out of range: {:g}", total));
  }
  return {};
}

Status ValidateServeJob(const ServeJobSpec& job, InputSource source, std::string_view label) {
  Namer n(source, label);
  if (job.model.name.size() > kMaxNameBytes) {
    return MakeError(ErrorCode::kInvalidArgument, n("--model", "model"),
                     fmt::format("name is longer than {} bytes", kMaxNameBytes));
  }
  if (auto st = CheckRange(job.qps, n("--qps", "serve.qps"), 0, kMaxQps, true); !st) return st;
  if (auto st = IntRange(job.input_len, n("--input-len", "serve.input_len"), 1, kMaxSeqLen); !st) return st;
  if (auto st = IntRange(job.output_len, n("--output-len", "serve.output_len"), 0, kMaxSeqLen); !st) return st;
  if (auto st = IntRange(job.top, n("--top", "top"), 1, kMaxTop); !st) return st;
  if (auto st = CheckRange(job.target_utilization, n("--util", "serve.target_utilization"), 0, 1, true); !st) return st;
  if (job.target_utilization >= 1) {
    return MakeError(ErrorCode::kInvalidArgument, n("--util", "serve.target_utilization"),
                     fmt::format("must be in (0, 1), got {:g}", job.target_utilization));
  }
  if (auto st = CheckRange(job.ttft_p99_ms, n("--ttft-ms", "slo.ttft_p99_ms"), 0, kMaxSloMs, true); !st) return st;
  if (auto st = CheckRange(job.tpot_p99_ms, n("--tpot-ms", "slo.tpot_p99_ms"), 0, kMaxSloMs, true); !st) return st;
  if (auto st = CheckRange(job.e2e_p99_ms, n("--e2e-ms", "slo.e2e_p99_ms"), 0, kMaxSloMs, true); !st) return st;
  if (static_cast<long long>(job.input_len) + job.output_len > 2LL * kMaxSeqLen) {
    return MakeError(ErrorCode::kInvalidArgument, n("--input-len", "serve.input_len"),
                     "input plus output tokens out of range");
  }
  return {};
}

}  // namespace gpuplan
