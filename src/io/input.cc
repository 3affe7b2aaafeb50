// The input contract: file size caps, safe excerpts of user text, UTF-8 repair, identifier
// checks and the one validation of training and serving jobs (docs/reliability.md).
#include "gpuplan/input.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <sys/stat.h>

#include "base/strings.h"

namespace gpuplan {

using internal::ToLower;

Result<std::string> ReadInputFile(const std::string& path, std::string_view field,
                                  std::uint64_t max_bytes) {
  const std::string f(field);
  if (path.empty())
    return MakeError(ErrorCode::kInvalidArgument, f, "is empty", "give a file path");
  if (path.size() > 4096 || path.find('\0') != std::string::npos) {
    return MakeError(ErrorCode::kInvalidArgument, f,
                     "path is not a valid file name: " + Excerpt(path));
  }
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    return MakeError(ErrorCode::kIo, f,
                     "cannot read " + Excerpt(path) + ": " + std::strerror(errno),
                     "check the path");
  }
  if (S_ISDIR(st.st_mode)) {
    return MakeError(ErrorCode::kIo, f, Excerpt(path) + " is a directory", "give a file");
  }
  // A device (/dev/zero, /dev/urandom, a terminal) is no input file: some never end. Pipes
  // (`-f /dev/stdin` fed by a pipe) are read, up to the limit.
  if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) {
    return MakeError(ErrorCode::kIo, f, Excerpt(path) + " is a device, not a file",
                     "give a regular file (or pipe the input in)");
  }
  if (S_ISREG(st.st_mode) && static_cast<std::uint64_t>(st.st_size) > max_bytes) {
    return MakeError(ErrorCode::kInvalidArgument, f,
                     fmt::format("{} has {} bytes, more than the limit of {} bytes", Excerpt(path),
                                 st.st_size, max_bytes),
                     "see docs/reliability.md for the input limits");
  }
  std::FILE* in = std::fopen(path.c_str(), "rb");
  if (in == nullptr) {
    return MakeError(ErrorCode::kIo, f,
                     "cannot read " + Excerpt(path) + ": " + std::strerror(errno),
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
    return MakeError(
        ErrorCode::kInvalidArgument, f,
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
  if (s.empty() || s.size() > kMaxIdentifierBytes || s[0] == '-' || s[0] == ' ' ||
      s.back() == ' ') {
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
  return MakeError(
      ErrorCode::kInvalidArgument, std::string(field),
      fmt::format("must be in {}{:g}, {:g}], got {:g}", lo_open ? "(" : "[", lo, hi, x));
}

namespace {

// Levenshtein distance of a and b if it is at most `cap`, else cap + 1: the length difference
// and each row's minimum are lower bounds, so most candidates stop early (did-you-mean over
// every preset on each unknown name was the fuzzers' hottest path).
size_t EditDistanceAtMost(std::string_view a, std::string_view b, size_t cap) {
  const size_t diff = a.size() > b.size() ? a.size() - b.size() : b.size() - a.size();
  if (diff > cap) return cap + 1;
  // Two rows reused across calls (one allocation per thread, not two per candidate).
  thread_local std::vector<size_t> prev, cur;
  prev.resize(b.size() + 1);
  cur.resize(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    size_t row_min = cur[0];
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min(std::min(prev[j], cur[j - 1]) + 1, sub);
      row_min = std::min(row_min, cur[j]);
    }
    if (row_min > cap) return cap + 1;
    std::swap(prev, cur);
  }
  return std::min(prev[b.size()], cap + 1);
}

}  // namespace

std::string ChoiceHint(std::string_view got, const std::vector<std::string>& choices) {
  std::string best = ClosestMatch(got, choices);
  if (best.empty()) return "use one of: " + internal::Join(choices);
  return "did you mean \"" + best + "\"? (one of: " + internal::Join(choices) + ")";
}

std::string ClosestMatch(std::string_view needle, const std::vector<std::string>& candidates) {
  if (needle.size() > kMaxNameBytes) return {};  // no suggestion for a runaway name (cost, echo)
  std::string n = ToLower(needle);
  const size_t limit = std::max<size_t>(2, n.size() / 2);
  std::string best;
  size_t best_d = limit + 1;  // only a distance within the limit can be suggested
  for (const auto& c : candidates) {
    if (best_d == 0) break;
    std::string lc = ToLower(c);
    // A candidate that contains the needle (or vice versa) is a strong match (distance <= 1)
    // when the shorter is at least half the longer: "US" inside "us-east-l" is no hint.
    const size_t shorter = std::min(n.size(), lc.size()), longer = std::max(n.size(), lc.size());
    const bool contains = !n.empty() && 2 * shorter >= longer &&
                          (lc.find(n) != std::string::npos || n.find(lc) != std::string::npos);
    const size_t d = contains ? (lc == n ? 0 : 1) : EditDistanceAtMost(n, lc, best_d - 1);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  // A distance as long as the name itself rewrites all of it ("zz" -> "US"): no hint.
  return best_d <= limit && best_d < n.size() ? best : std::string();
}

}  // namespace gpuplan
