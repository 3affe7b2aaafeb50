#include "io/yaml_util.h"

#include <yaml-cpp/eventhandler.h>

#include <sstream>

namespace gpuplan::internal {

namespace {

// Counts content events of one document; nulls (an empty document) do not count.
class ContentCounter : public YAML::EventHandler {
 public:
  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark& m, YAML::anchor_t) override { Content(m); }
  void OnScalar(const YAML::Mark& m, const std::string&, YAML::anchor_t,
                const std::string&) override {
    Content(m);
  }
  void OnSequenceStart(const YAML::Mark& m, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    Content(m);
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark& m, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    Content(m);
  }
  void OnMapEnd() override {}
  int content() const { return content_; }
  int line() const { return line_; }
  void Reset() { content_ = 0; }

 private:
  // The first content event of the document gives its line.
  void Content(const YAML::Mark& m) {
    if (content_++ == 0) line_ = m.line + 1;
  }
  int content_ = 0;
  int line_ = 0;
};

}  // namespace

YamlDocument LoadOneYamlDocument(std::string_view text) {
  YamlDocument out;
  out.root = YAML::Load(std::string(text));
  std::istringstream in{std::string(text)};
  YAML::Parser parser(in);
  ContentCounter counter;
  // The first document was loaded above; scan a bounded number of later ones (a trailing `---`
  // gives an empty one; yaml-cpp 0.7 can yield endless empty ones, hence the bound).
  if (!parser.HandleNextDocument(counter)) return out;
  for (int i = 0; i < 4; ++i) {
    counter.Reset();
    if (!parser.HandleNextDocument(counter)) break;
    if (counter.content() > 0) {
      out.extra_content = true;
      out.extra_line = counter.line();
      break;
    }
  }
  return out;
}

}  // namespace gpuplan::internal
