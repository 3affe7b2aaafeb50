// Load traces for `simulate`: per-minute CSV, the Azure LLM inference trace (2023), Mooncake /
// Dynamo JSONL, and a seeded synthetic diurnal generator. Every bad line is an Error naming
// "label:LINE:field" (docs/simulate.md section 1).
#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <fstream>
#include <numbers>
#include <sstream>

#include "gpuplan/input.h"
#include "gpuplan/simulate.h"
#include "io/csv.h"
#include "io/json_util.h"

namespace gpuplan {

namespace {

// Lines of `text` with their 1-based numbers; CR stripped.
std::vector<std::pair<int, std::string_view>> Lines(std::string_view text) {
  std::vector<std::pair<int, std::string_view>> out;
  int n = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t e = text.find('\n', pos);
    if (e == std::string_view::npos) e = text.size();
    std::string_view line = text.substr(pos, e - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    ++n;
    out.emplace_back(n, line);
    if (e == text.size()) break;
    pos = e + 1;
  }
  return out;
}

std::vector<std::string_view> SplitComma(std::string_view line) {
  std::vector<std::string_view> v;
  size_t pos = 0;
  while (true) {
    size_t e = line.find(',', pos);
    if (e == std::string_view::npos) {
      v.push_back(line.substr(pos));
      break;
    }
    v.push_back(line.substr(pos, e - pos));
    pos = e + 1;
  }
  return v;
}

bool Blank(std::string_view s) { return internal::Trim(s).empty(); }

Error LineError(std::string_view label, int line, std::string_view field, std::string message,
                std::string hint = {}) {
  return MakeError(ErrorCode::kParse, fmt::format("{}:{}:{}", label, line, field),
                   std::move(message), std::move(hint));
}

// A trace covers at most a year (the synthetic trace's --days bound): its intervals are
// allocated up front.
constexpr int kMaxTraceDays = 366;
constexpr double kMaxTraceSpanS = kMaxTraceDays * 86400.0;

Result<double> NonNegative(std::string_view cell, std::string_view label, int line,
                           std::string_view field, double max) {
  auto v = internal::ParseDouble(internal::Trim(cell));
  if (!v || !std::isfinite(*v) || *v < 0) {
    return LineError(label, line, field,
                     fmt::format("expected a number >= 0, got \"{}\"", internal::Trim(cell)),
                     "fix or remove the line");
  }
  if (*v > max) {
    return LineError(label, line, field, fmt::format("must be at most {:g}, got {:g}", max, *v),
                     "fix or remove the line");
  }
  return *v;
}

// Days since 1970-01-01 of a civil date (Howard Hinnant's days_from_civil).
long DaysFromCivil(long y, long m, long d) {
  y -= m <= 2 ? 1 : 0;
  const long era = (y >= 0 ? y : y - 399) / 400;
  const long yoe = y - era * 400;
  const long doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

// "YYYY-MM-DD HH:MM:SS[.fraction]" -> seconds since the epoch.
std::optional<double> ParseTimestamp(std::string_view s) {
  s = std::string_view(s).substr(0, s.size());
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  if (s.size() < 19 || s[4] != '-' || s[7] != '-' || (s[10] != ' ' && s[10] != 'T') ||
      s[13] != ':' || s[16] != ':') {
    return std::nullopt;
  }
  auto num = [&](size_t at, size_t len) -> std::optional<long> {
    long v = 0;
    for (size_t i = at; i < at + len; ++i) {
      if (s[i] < '0' || s[i] > '9') return std::nullopt;
      v = v * 10 + (s[i] - '0');
    }
    return v;
  };
  auto y = num(0, 4), mo = num(5, 2), d = num(8, 2), h = num(11, 2), mi = num(14, 2),
       se = num(17, 2);
  if (!y || !mo || !d || !h || !mi || !se || *mo < 1 || *mo > 12 || *d < 1 || *d > 31 || *h > 23 ||
      *mi > 59 || *se > 60) {
    return std::nullopt;
  }
  double frac = 0;
  if (s.size() > 19) {
    if (s[19] != '.') return std::nullopt;
    double scale = 0.1;
    for (size_t i = 20; i < s.size(); ++i) {
      if (s[i] < '0' || s[i] > '9') return std::nullopt;
      frac += (s[i] - '0') * scale;
      scale /= 10;
    }
  }
  return static_cast<double>(DaysFromCivil(*y, *mo, *d)) * 86400.0 +
         static_cast<double>(*h * 3600 + *mi * 60 + *se) + frac;
}

// Bins requests (seconds from the trace start, non-decreasing) into intervals.
struct Binner {
  double interval_s;
  std::vector<double> count, in_sum, out_sum;
  void Add(double t, double in, double out) {
    const auto k = static_cast<size_t>(std::floor(t / interval_s));
    if (k >= count.size()) {
      count.resize(k + 1, 0);
      in_sum.resize(k + 1, 0);
      out_sum.resize(k + 1, 0);
    }
    count[k] += 1;
    in_sum[k] += in;
    out_sum[k] += out;
  }
  LoadTrace Finish(std::string source, double start_of_day_s) const {
    LoadTrace t;
    t.interval_s = interval_s;
    t.source = std::move(source);
    t.start_of_day_s = start_of_day_s;
    for (size_t k = 0; k < count.size(); ++k) {
      t.rps.push_back(count[k] / interval_s);
      t.input_tokens.push_back(count[k] > 0 ? in_sum[k] / count[k] : 0);
      t.output_tokens.push_back(count[k] > 0 ? out_sum[k] / count[k] : 0);
    }
    return t;
  }
};

Status CheckInterval(double interval_s) {
  if (!(interval_s >= 1 && interval_s <= 3600)) {
    return MakeError(ErrorCode::kInvalidArgument, "--interval-s",
                     fmt::format("must be in [1, 3600], got {}", interval_s));
  }
  return {};
}

// splitmix64 (Steele, Lea, Flood 2014): a fixed, portable sequence for a seed.
struct SplitMix64 {
  std::uint64_t s;
  std::uint64_t Next() {
    std::uint64_t z = (s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  double Uniform() {
    return static_cast<double>(Next() >> 11) * (1.0 / 9007199254740992.0);
  }  // [0, 1)
};

}  // namespace

double LoadTrace::PeakRps() const {
  return rps.empty() ? 0 : *std::max_element(rps.begin(), rps.end());
}

double LoadTrace::MeanRps() const {
  if (rps.empty()) return 0;
  double s = 0;
  for (double r : rps) s += r;
  return s / static_cast<double>(rps.size());
}

Result<LoadTrace> ParseMinuteCsv(std::string_view text, std::string_view label) {
  LoadTrace t;
  t.interval_s = 60;
  t.source = fmt::format("{} (per-minute CSV)", label);
  bool header = false, tokens = false;
  for (auto [n, line] : Lines(text)) {
    if (Blank(line) || internal::Trim(line).front() == '#') continue;
    auto cells = SplitComma(line);
    if (!header) {
      std::vector<std::string> h;
      for (auto c : cells) h.push_back(internal::ToLower(internal::Trim(c)));
      const bool two = h.size() == 2 && h[0] == "minute" && h[1] == "rps";
      const bool four = h.size() == 4 && h[0] == "minute" && h[1] == "rps" &&
                        h[2] == "input_tokens" && h[3] == "output_tokens";
      if (!two && !four) {
        return LineError(
            label, n, "header",
            fmt::format("expected \"minute,rps[,input_tokens,output_tokens]\", got \"{}\"", line));
      }
      tokens = four;
      header = true;
      continue;
    }
    const size_t want = tokens ? 4 : 2;
    if (cells.size() != want) {
      return LineError(
          label, n, cells.size() < want ? (cells.size() < 2 ? "rps" : "output_tokens") : "columns",
          fmt::format("expected {} columns, got {}", want, cells.size()));
    }
    auto minute = internal::ParseDouble(internal::Trim(cells[0]));
    if (!minute || *minute != static_cast<double>(t.rps.size())) {
      return LineError(label, n, "minute",
                       fmt::format("expected minute {} (rows in order, no gaps), got \"{}\"",
                                   t.rps.size(), internal::Trim(cells[0])));
    }
    auto rps = NonNegative(cells[1], label, n, "rps", kMaxQps);
    if (!rps) return rps.error();
    t.rps.push_back(*rps);
    if (tokens) {
      auto in = NonNegative(cells[2], label, n, "input_tokens", kMaxSeqLen);
      if (!in) return in.error();
      auto out = NonNegative(cells[3], label, n, "output_tokens", kMaxSeqLen);
      if (!out) return out.error();
      t.input_tokens.push_back(*in);
      t.output_tokens.push_back(*out);
    }
  }
  if (!header)
    return MakeError(ErrorCode::kParse, std::string(label), "empty trace: no header line",
                     "start with \"minute,rps\"");
  if (t.rps.empty())
    return MakeError(ErrorCode::kParse, std::string(label), "the trace has no rows",
                     "add one row per minute");
  return t;
}

Result<LoadTrace> ParseAzureLlmTrace(std::string_view text, std::string_view label,
                                     double interval_s) {
  if (auto st = CheckInterval(interval_s); !st) return st.error();
  Binner bin{interval_s, {}, {}, {}};
  bool header = false;
  std::optional<double> t0;
  double last = 0;
  for (auto [n, line] : Lines(text)) {
    if (Blank(line)) continue;
    auto cells = SplitComma(line);
    if (!header) {
      if (cells.size() != 3 || internal::Trim(cells[0]) != "TIMESTAMP" ||
          internal::Trim(cells[1]) != "ContextTokens" ||
          internal::Trim(cells[2]) != "GeneratedTokens") {
        return LineError(
            label, n, "header",
            fmt::format("expected \"TIMESTAMP,ContextTokens,GeneratedTokens\", got \"{}\"", line));
      }
      header = true;
      continue;
    }
    if (cells.size() != 3) {
      return LineError(
          label, n,
          cells.size() < 2 ? "ContextTokens" : (cells.size() < 3 ? "GeneratedTokens" : "columns"),
          fmt::format("expected 3 columns, got {}", cells.size()));
    }
    auto ts = ParseTimestamp(cells[0]);
    if (!ts) {
      return LineError(label, n, "TIMESTAMP",
                       fmt::format("expected \"YYYY-MM-DD HH:MM:SS.fffffff\", got \"{}\"",
                                   internal::Trim(cells[0])));
    }
    auto in = NonNegative(cells[1], label, n, "ContextTokens", kMaxSeqLen);
    if (!in) return in.error();
    auto out = NonNegative(cells[2], label, n, "GeneratedTokens", kMaxSeqLen);
    if (!out) return out.error();
    if (!t0) t0 = *ts;
    if (*ts < last) {
      return LineError(label, n, "TIMESTAMP",
                       fmt::format("timestamps must not decrease ({} is before the previous line)",
                                   internal::Trim(cells[0])),
                       "sort the trace by TIMESTAMP");
    }
    last = *ts;
    if (*ts - *t0 > kMaxTraceSpanS) {
      return LineError(label, n, "TIMESTAMP",
                       fmt::format("the trace spans more than {} days", kMaxTraceDays),
                       "simulate at most a year: cut the trace");
    }
    bin.Add(*ts - *t0, *in, *out);
  }
  if (!header)
    return MakeError(ErrorCode::kParse, std::string(label), "empty trace: no header line");
  if (!t0) return MakeError(ErrorCode::kParse, std::string(label), "the trace has no requests");
  const double day = std::fmod(*t0, 86400.0);
  return bin.Finish(fmt::format("{} (Azure LLM inference trace)", label),
                    day - std::fmod(day, interval_s));
}

Result<LoadTrace> ParseMooncakeTrace(std::string_view text, std::string_view label,
                                     double interval_s) {
  if (auto st = CheckInterval(interval_s); !st) return st.error();
  Binner bin{interval_s, {}, {}, {}};
  double last = 0;
  bool any = false;
  for (auto [n, line] : Lines(text)) {
    if (Blank(line)) continue;
    const std::string where = fmt::format("{}:{}", label, n);
    auto j = internal::ParseJson(line, where);
    if (!j)
      return LineError(label, n, "line", "not valid JSON: " + j.error().message,
                       "one JSON object per line");
    if (!j->is_object()) return LineError(label, n, "line", "expected a JSON object");
    double v[3] = {0, 0, 0};
    const char* keys[3] = {"timestamp", "input_length", "output_length"};
    for (int k = 0; k < 3; ++k) {
      auto it = j->find(keys[k]);
      if (it == j->end())
        return LineError(label, n, keys[k], "missing",
                         "each line needs timestamp, input_length, output_length");
      if (!it->is_number() || !(it->get<double>() >= 0) || !std::isfinite(it->get<double>())) {
        return LineError(label, n, keys[k],
                         fmt::format("expected a number >= 0, got {}", it->dump()));
      }
      v[k] = it->get<double>();
    }
    if (v[0] < last) {
      return LineError(label, n, "timestamp",
                       fmt::format("timestamps must not decrease ({} ms after {} ms)", v[0], last),
                       "sort the trace by timestamp");
    }
    last = v[0];
    any = true;
    if (v[0] / 1000.0 > kMaxTraceSpanS) {
      return LineError(
          label, n, "timestamp",
          fmt::format("the trace spans more than {} days ({:g} ms)", kMaxTraceDays, v[0]),
          "timestamps are milliseconds from the trace's start; simulate at most a "
          "year");
    }
    if (v[1] > kMaxSeqLen || v[2] > kMaxSeqLen) {
      return LineError(label, n, v[1] > kMaxSeqLen ? "input_length" : "output_length",
                       fmt::format("must be at most {} tokens, got {:g}", kMaxSeqLen,
                                   v[1] > kMaxSeqLen ? v[1] : v[2]),
                       "a request's length in tokens; drop or fix the line");
    }
    bin.Add(v[0] / 1000.0, v[1], v[2]);
  }
  if (!any) return MakeError(ErrorCode::kParse, std::string(label), "the trace has no requests");
  return bin.Finish(fmt::format("{} (Mooncake JSONL)", label), 0);
}

Result<LoadTrace> ParseTrace(std::string_view text, std::string_view label) {
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);  // a UTF-8 byte-order mark
  for (auto [n, line] : Lines(text)) {
    if (Blank(line)) continue;
    std::string first = internal::Trim(line);
    if (first.front() == '{') return ParseMooncakeTrace(text, label);
    if (first.rfind("TIMESTAMP", 0) == 0) return ParseAzureLlmTrace(text, label);
    if (internal::ToLower(first).rfind("minute", 0) == 0 || first.front() == '#')
      return ParseMinuteCsv(text, label);
    return LineError(
        label, n, "header",
        fmt::format("unknown trace format (first line \"{}\")", first.substr(0, 60)),
        "use a per-minute CSV (minute,rps[,input_tokens,output_tokens]), the Azure LLM trace CSV "
        "(TIMESTAMP,ContextTokens,GeneratedTokens) or Mooncake JSONL");
  }
  return MakeError(ErrorCode::kParse, std::string(label), "the trace file is empty");
}

Result<LoadTrace> ReadTraceFile(const std::string& path) {
  // Bounded like every input (a device such as /dev/zero never ends).
  auto text = ReadInputFile(path, "--trace", kMaxTraceFileBytes);
  if (!text) return text.error();
  return ParseTrace(*text, path);
}

Result<LoadTrace> SyntheticTrace(const SyntheticTraceOptions& o) {
  if (auto st = CheckInterval(o.interval_s); !st) return st.error();
  if (o.days < 1 || o.days > 366) {
    return MakeError(ErrorCode::kInvalidArgument, "--days",
                     fmt::format("must be in [1, 366], got {}", o.days));
  }
  if (!(o.peak_rps > 0 && o.peak_rps <= kMaxQps))
    return MakeError(ErrorCode::kInvalidArgument, "--peak-rps",
                     fmt::format("must be in (0, {:g}], got {}", kMaxQps, o.peak_rps));
  if (!(o.trough_fraction >= 0 && o.trough_fraction <= 1)) {
    return MakeError(ErrorCode::kInvalidArgument, "--trough",
                     fmt::format("must be in [0, 1], got {}", o.trough_fraction),
                     "the night load as a fraction of the peak, e.g. 0.1");
  }
  if (!(o.peak_hour >= 0 && o.peak_hour < 24)) {
    return MakeError(ErrorCode::kInvalidArgument, "--peak-hour",
                     fmt::format("must be in [0, 24), got {}", o.peak_hour),
                     "the hour of the daily peak, e.g. 14 for 2 pm");
  }
  if (!(o.noise >= 0 && o.noise < 1))
    return MakeError(ErrorCode::kInvalidArgument, "--noise",
                     fmt::format("must be in [0, 1), got {}", o.noise));
  if (!(o.weekend_factor > 0 && o.weekend_factor <= 1)) {
    return MakeError(ErrorCode::kInvalidArgument, "--weekend-factor",
                     fmt::format("must be in (0, 1], got {}", o.weekend_factor));
  }
  if (!(o.bursts_per_day >= 0 && o.bursts_per_day <= 1440)) {
    return MakeError(ErrorCode::kInvalidArgument, "--bursts",
                     fmt::format("must be in [0, 1440] per day, got {}", o.bursts_per_day));
  }
  if (!(o.burst_factor >= 1 && o.burst_factor <= 1000)) {
    return MakeError(ErrorCode::kInvalidArgument, "--burst-factor",
                     fmt::format("must be in [1, 1000] x the load, got {}", o.burst_factor));
  }
  if (!(o.burst_minutes > 0 && o.burst_minutes <= 1440)) {
    return MakeError(ErrorCode::kInvalidArgument, "--burst-minutes",
                     fmt::format("must be in (0, 1440], got {}", o.burst_minutes));
  }
  LoadTrace t;
  t.interval_s = o.interval_s;
  t.source = fmt::format(
      "synthetic diurnal: {} day(s), peak {:g} req/s at {:g}h, night {:g} x peak, seed {}", o.days,
      o.peak_rps, o.peak_hour, o.trough_fraction, o.seed);
  const auto per_day = static_cast<size_t>(std::llround(86400.0 / o.interval_s));
  const size_t n = per_day * static_cast<size_t>(o.days);
  SplitMix64 rng{o.seed};
  // Burst windows: start interval and length, drawn per day.
  std::vector<double> mult(n, 1.0);
  for (int d = 0; d < o.days; ++d) {
    const double expected = o.bursts_per_day;
    int k = static_cast<int>(expected);
    if (rng.Uniform() < expected - k) ++k;
    for (int b = 0; b < k; ++b) {
      const auto start = static_cast<size_t>(d) * per_day +
                         static_cast<size_t>(rng.Uniform() * static_cast<double>(per_day));
      const auto len =
          static_cast<size_t>(std::max(1.0, std::round(o.burst_minutes * 60 / o.interval_s)));
      for (size_t i = start; i < std::min(n, start + len); ++i)
        mult[i] = std::max(mult[i], o.burst_factor);
    }
  }
  for (size_t i = 0; i < n; ++i) {
    const double hour = std::fmod((static_cast<double>(i) + 0.5) * o.interval_s / 3600.0, 24.0);
    // Raised cosine with a flattened night: the shape falls to the trough about 8 h from the peak.
    const double c = 0.5 * (1 + std::cos(2 * std::numbers::pi * (hour - o.peak_hour) / 24.0));
    const double shape = o.trough_fraction + (1 - o.trough_fraction) * c * c;
    const auto day = static_cast<int>(static_cast<double>(i) / static_cast<double>(per_day));
    const double week = (day % 7 == 5 || day % 7 == 6) ? o.weekend_factor : 1.0;
    const double noise = 1 + o.noise * (2 * rng.Uniform() - 1);
    t.rps.push_back(o.peak_rps * shape * week * noise * mult[i]);
  }
  return t;
}

}  // namespace gpuplan
