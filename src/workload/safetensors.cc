// .safetensors header reader: exact parameter counts and bytes per dtype without reading the
// weights. Format: ../shared/reference/formats.md section 1 (8-byte little-endian header length,
// then a JSON header; offsets relative to the data buffer).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "gpuplan/model.h"
#include "gpuplan/input.h"
#include "io/json_fields.h"
#include "io/json_util.h"

namespace gpuplan {

using internal::Json;

namespace {

constexpr std::uint64_t kMaxHeaderBytes = 100ull * 1024 * 1024;  // reference library's cap

// Element size in bytes; 0 for unknown dtypes (counted, not sized).
double DtypeBytes(const std::string& d) {
  static const std::map<std::string, double> kSizes = {
      {"BOOL", 1},       {"U8", 1},          {"I8", 1},          {"F8_E4M3", 1}, {"F8_E5M2", 1},
      {"F8_E8M0", 1},    {"F8_E4M3FNUZ", 1}, {"F8_E5M2FNUZ", 1}, {"U16", 2},     {"I16", 2},
      {"F16", 2},        {"BF16", 2},        {"U32", 4},         {"I32", 4},     {"F32", 4},
      {"U64", 8},        {"I64", 8},         {"F64", 8},         {"C64", 8},     {"F4", 0.5},
      {"F6_E2M3", 0.75}, {"F6_E3M2", 0.75}};
  auto it = kSizes.find(d);
  return it == kSizes.end() ? 0.0 : it->second;
}

}  // namespace

Result<SafetensorsSummary> ParseSafetensorsHeader(std::string_view header_json,
                                                  std::string_view label) {
  // nlohmann keeps the last of duplicate keys silently; the format forbids duplicates, so
  // watch the top-level keys while parsing.
  std::set<std::string> seen_keys;
  std::string duplicate;
  int depth = 0;
  auto cb = [&](int d, Json::parse_event_t ev, Json& parsed_value) {
    if (ev == Json::parse_event_t::object_start) ++depth;
    if (ev == Json::parse_event_t::object_end) --depth;
    if (ev == Json::parse_event_t::key && d == 1 && depth == 1 && parsed_value.is_string()) {
      if (!seen_keys.insert(parsed_value.get<std::string>()).second && duplicate.empty()) {
        duplicate = parsed_value.get<std::string>();
      }
    }
    return true;
  };
  Result<Json> parsed = Json();
  if (header_json.size() > kMaxHeaderBytes) {
    return MakeError(
        ErrorCode::kInvalidArgument, std::string(label),
        "header is larger than the limit of " + std::to_string(kMaxHeaderBytes) + " bytes");
  }
  if (internal::JsonNestingDepth(header_json, kMaxJsonDepth) > kMaxJsonDepth) {
    return MakeError(ErrorCode::kParse, std::string(label),
                     "header JSON nested deeper than " + std::to_string(kMaxJsonDepth) + " levels",
                     "the file is corrupt; re-export it");
  }
  try {
    parsed = Json::parse(header_json.begin(), header_json.end(), cb);
  } catch (const Json::parse_error& e) {
    return MakeError(ErrorCode::kParse, std::string(label),
                     "malformed JSON at byte " + std::to_string(e.byte), "check the file's syntax");
  } catch (const Json::exception&) {
    return MakeError(ErrorCode::kParse, std::string(label),
                     "malformed JSON header (a number out of range or invalid text)",
                     "the file is corrupt; re-export it");
  }
  if (!duplicate.empty()) {
    return MakeError(ErrorCode::kParse, std::string(label) + ":" + duplicate,
                     "duplicate tensor name in the header", "the file is corrupt; re-export it");
  }
  const Json& h = *parsed;
  const std::string L(label);
  if (!h.is_object()) {
    return MakeError(ErrorCode::kParse, L, "safetensors header must be a JSON object");
  }
  SafetensorsSummary s;
  std::map<std::string, std::int64_t> by_dtype;
  std::vector<std::pair<std::int64_t, std::int64_t>> ranges;
  for (auto it = h.begin(); it != h.end(); ++it) {
    if (it.key() == "__metadata__") continue;
    const Json& t = it.value();
    const std::string path = L + ":" + it.key();
    if (!t.is_object() || !t.contains("dtype") || !t.contains("shape") ||
        !t.contains("data_offsets")) {
      return MakeError(ErrorCode::kParse, path, "tensor entry needs dtype, shape and data_offsets");
    }
    if (!t["dtype"].is_string() || !t["shape"].is_array() || !t["data_offsets"].is_array() ||
        t["data_offsets"].size() != 2) {
      return MakeError(ErrorCode::kParse, path,
                       "malformed tensor entry (" + internal::JsonTypeName(t) + ")");
    }
    std::int64_t count = 1;
    for (const auto& d : t["shape"]) {
      if (!d.is_number_integer() || d.get<std::int64_t>() < 0) {
        return MakeError(ErrorCode::kParse, path + ".shape", "dimensions must be integers >= 0");
      }
      std::int64_t dim = d.get<std::int64_t>();
      if (dim > 0 && count > (std::int64_t{1} << 50) / dim) {
        return MakeError(ErrorCode::kParse, path + ".shape", "tensor too large");
      }
      count *= dim;
    }
    const auto& off = t["data_offsets"];
    if (!off[0].is_number_integer() || !off[1].is_number_integer() ||
        off[0].get<std::int64_t>() < 0 || off[1].get<std::int64_t>() < off[0].get<std::int64_t>()) {
      return MakeError(ErrorCode::kParse, path + ".data_offsets",
                       "must be [begin, end], begin <= end");
    }
    std::int64_t begin = off[0].get<std::int64_t>(), end = off[1].get<std::int64_t>();
    std::string dtype = t["dtype"].get<std::string>();
    double es = DtypeBytes(dtype);
    if (es > 0 && static_cast<double>(end - begin) != static_cast<double>(count) * es) {
      return MakeError(ErrorCode::kParse, path,
                       "data_offsets span " + std::to_string(end - begin) + " bytes but shape x " +
                           dtype + " needs " + std::to_string(static_cast<double>(count) * es));
    }
    ranges.emplace_back(begin, end);
    constexpr std::int64_t kMaxTotal = std::int64_t{1} << 53;
    if (s.params > kMaxTotal - count || s.bytes > kMaxTotal - (end - begin) ||
        by_dtype[dtype] > kMaxTotal - count) {
      return MakeError(ErrorCode::kParse, path, "tensor sizes add up past 2^53",
                       "the file is corrupt; re-export it");
    }
    s.params += count;
    s.bytes += end - begin;
    by_dtype[dtype] += count;
    ++s.tensors;
  }
  std::sort(ranges.begin(), ranges.end());
  for (size_t i = 1; i < ranges.size(); ++i) {
    if (ranges[i].first < ranges[i - 1].second) {
      return MakeError(ErrorCode::kParse, L, "tensor byte ranges overlap");
    }
  }
  s.params_by_dtype.assign(by_dtype.begin(), by_dtype.end());
  return s;
}

namespace {

Result<SafetensorsSummary> ReadOneFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return MakeError(ErrorCode::kIo, path, "cannot open file", "check the path");
  unsigned char len_bytes[8];
  in.read(reinterpret_cast<char*>(len_bytes), 8);
  if (in.gcount() != 8) {
    return MakeError(ErrorCode::kParse, path, "truncated safetensors file: fewer than 8 bytes",
                     "the file is not a .safetensors file or is incomplete");
  }
  std::uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | len_bytes[i];
  if (n == 0 || n > kMaxHeaderBytes) {
    return MakeError(ErrorCode::kParse, path,
                     "header length " + std::to_string(n) + " is out of range (1..100 MB)",
                     "the file is not a .safetensors file");
  }
  std::error_code ec;
  auto size = std::filesystem::file_size(path, ec);
  if (!ec && size < 8 + n) {
    return MakeError(ErrorCode::kParse, path,
                     "truncated safetensors header: needs " + std::to_string(n) +
                         " bytes, file has " + std::to_string(size - 8),
                     "download the file again");
  }
  std::string header(static_cast<size_t>(n), '\0');
  in.read(header.data(), static_cast<std::streamsize>(n));
  if (static_cast<std::uint64_t>(in.gcount()) != n) {
    return MakeError(ErrorCode::kParse, path, "truncated safetensors header");
  }
  auto summary = ParseSafetensorsHeader(header, path);
  if (summary && !ec && static_cast<std::uint64_t>(summary->bytes) > size - 8 - n) {
    return MakeError(ErrorCode::kParse, path,
                     "truncated safetensors data: tensors need " + std::to_string(summary->bytes) +
                         " bytes, file has " + std::to_string(size - 8 - n),
                     "download the file again");
  }
  return summary;
}

}  // namespace

Result<SafetensorsSummary> ReadSafetensors(const std::string& path) {
  namespace fs = std::filesystem;
  if (path.size() >= 5 && path.substr(path.size() - 5) == ".json") {
    auto text = ReadInputFile(path, path, kMaxJsonFileBytes);
    if (!text) return text.error();
    auto j = internal::ParseJson(*text, path);
    if (!j) return j.error();
    if (!j->is_object() || !j->contains("weight_map") || !(*j)["weight_map"].is_object()) {
      return MakeError(ErrorCode::kParse, path + ".weight_map",
                       "a safetensors index needs a weight_map object");
    }
    SafetensorsSummary s;
    std::map<std::string, int> shards;
    for (auto it = (*j)["weight_map"].begin(); it != (*j)["weight_map"].end(); ++it) {
      if (!it.value().is_string()) {
        return MakeError(ErrorCode::kParse, path + ".weight_map." + FieldKey(it.key()),
                         "expected a shard file name, got " + internal::JsonTypeName(it.value()));
      }
      const std::string& shard = it.value().get_ref<const std::string&>();
      if (shard.empty() || shard.size() > kMaxNameBytes || shard.find('/') != std::string::npos ||
          shard.find('\\') != std::string::npos || shard == "." || shard == ".." ||
          shard.find('\0') != std::string::npos) {
        return MakeError(ErrorCode::kParse, path + ".weight_map." + FieldKey(it.key()),
                         "shard must be a plain file name beside the index, got " + Excerpt(shard));
      }
      shards[it.value().get<std::string>()]++;
    }
    fs::path dir = fs::path(path).parent_path();
    bool all_present = !shards.empty();
    for (const auto& [file, unused] : shards) {
      // The error_code overload: a name the file system rejects (too long, say) is an absent
      // shard, not an exception.
      std::error_code ec;
      if (!fs::exists(dir / file, ec)) all_present = false;
    }
    if (all_present) {
      std::map<std::string, std::int64_t> by_dtype;
      for (const auto& [file, unused] : shards) {
        auto one = ReadOneFile((dir / file).string());
        if (!one) return one.error();
        constexpr std::int64_t kMaxTotal = std::int64_t{1} << 53;
        if (s.params > kMaxTotal - one->params || s.bytes > kMaxTotal - one->bytes) {
          return MakeError(ErrorCode::kParse, path, "shard sizes add up past 2^53");
        }
        s.params += one->params;
        s.bytes += one->bytes;
        s.tensors += one->tensors;
        for (const auto& [d, c] : one->params_by_dtype) by_dtype[d] += c;
      }
      s.params_by_dtype.assign(by_dtype.begin(), by_dtype.end());
      return s;
    }
    // Shards absent: the index's metadata is all there is.
    const Json& meta = j->value("metadata", Json::object());
    auto total_size = internal::GetInt(meta, "total_size", path + ".metadata");
    if (!total_size) return total_size.error();
    auto total_params = internal::GetInt(meta, "total_parameters", path + ".metadata");
    if (!total_params) return total_params.error();
    if (!*total_size && !*total_params) {
      return MakeError(ErrorCode::kParse, path + ".metadata.total_size",
                       "missing, and the shard files are not beside the index",
                       "put the shards beside the index, or pass config.json");
    }
    for (const auto& [key, v] :
         {std::pair<const char*, std::optional<std::int64_t>>{"total_size", *total_size},
          {"total_parameters", *total_params}}) {
      if (v && (*v < 0 || *v > (std::int64_t{1} << 53))) {
        return MakeError(ErrorCode::kParse, path + ".metadata." + key,
                         "must be in [0, 2^53], got " + std::to_string(*v));
      }
    }
    s.bytes = total_size->value_or(0);
    s.params = total_params->value_or(0);
    s.tensors = static_cast<int>((*j)["weight_map"].size());
    return s;
  }
  return ReadOneFile(path);
}

}  // namespace gpuplan
