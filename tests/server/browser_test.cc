// The page in headless Chromium against a server started here: it submits a training and a
// serving job (the forms' own submit path, via ?auto=train,serve), and the test checks the
// rendered plans, that every chart has drawn (canvas[data-drawn="1"]), that the page's request
// gives the same plan document as the CLI, and keeps a screenshot per chart under the build
// directory (browser_artifacts/). Skipped only when no chromium is installed.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "server/server_process.h"

namespace gpuplan {
namespace {

using nlohmann::json;

std::string Chromium() {
  for (const char* p :
       {"/usr/bin/chromium", "/usr/bin/chromium-headless-shell", "/usr/bin/chromium-browser"}) {
    if (access(p, X_OK) == 0) return p;
  }
  return "";
}

std::string Shell(const std::string& cmd) {
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return "";
  std::string out;
  char buf[8192];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  pclose(p);
  return out;
}

std::string Unescape(std::string s) {
  for (auto [from, to] :
       {std::pair{"&quot;", "\""}, {"&lt;", "<"}, {"&gt;", ">"}, {"&#39;", "'"}, {"&amp;", "&"}}) {
    for (size_t p = 0; (p = s.find(from, p)) != std::string::npos; p += std::string(to).size()) {
      s.replace(p, std::string(from).size(), to);
    }
  }
  return s;
}

// The opening tag of the element with id `id` in the dumped DOM ("" when absent). Plain string
// search: std::regex recurses per character and overflows the stack on a large DOM.
std::string OpenTag(const std::string& dom, const std::string& id) {
  const size_t at = dom.find("id=\"" + id + "\"");
  if (at == std::string::npos) return "";
  const size_t lt = dom.rfind('<', at), gt = dom.find('>', at);
  if (lt == std::string::npos || gt == std::string::npos) return "";
  return dom.substr(lt, gt - lt + 1);
}

// The text of <textarea id="ID" ...>TEXT</textarea> in the dumped DOM.
std::string Textarea(const std::string& dom, const std::string& id) {
  const std::string tag = OpenTag(dom, id);
  if (tag.empty()) return "";
  const size_t start = dom.find(tag) + tag.size();
  const size_t end = dom.find("</textarea>", start);
  if (end == std::string::npos) return "";
  return Unescape(dom.substr(start, end - start));
}

TEST(BrowserTest, PageSubmitsJobsAndDrawsCharts) {
  const std::string chromium = Chromium();
  if (chromium.empty()) GTEST_SKIP() << "chromium not installed (tools/setup.sh installs it)";
  testing::ServerProcess srv;
  ASSERT_GT(srv.port(), 0);
  const std::string flags =
      " --headless --no-sandbox --disable-gpu --hide-scrollbars --disable-dev-shm-usage"
      " --no-first-run --user-data-dir=" +
      ::testing::TempDir() + "gpuplan-chromium";
  const std::string url = srv.url() + "/?auto=train,serve";
  const std::string dom =
      Shell(chromium + flags + " --virtual-time-budget=60000 --dump-dom '" + url + "' 2>/dev/null");
  ASSERT_NE(dom.find("data-ready=\"1\""), std::string::npos) << dom.substr(0, 2000);
  for (const char* id : {"chart-pareto", "chart-memory", "chart-step", "chart-day"}) {
    EXPECT_NE(OpenTag(dom, id).find("data-drawn=\"1\""), std::string::npos) << id << " not drawn";
  }
  EXPECT_NE(OpenTag(dom, "train-error").find("hidden"), std::string::npos)
      << "the training form shows an error";
  EXPECT_NE(OpenTag(dom, "serve-error").find("hidden"), std::string::npos)
      << "the serving form shows an error";
  // The ranked plans are rendered: a header row plus one row per plan of the document.
  const json train_doc = json::parse(Textarea(dom, "train-doc"));
  const json serve_doc = json::parse(Textarea(dom, "serve-doc"));
  ASSERT_FALSE(train_doc["plans"].empty());
  ASSERT_FALSE(serve_doc["plans"].empty());
  EXPECT_NE(dom.find(train_doc["plans"][0]["instance_type"].get<std::string>()), std::string::npos);
  EXPECT_NE(dom.find(serve_doc["plans"][0]["instance_type"].get<std::string>()), std::string::npos);

  // The page's own requests, planned by the CLI from a job file, give the same documents.
  const std::string tf = ::testing::TempDir() + "page_train.yaml",
                    sf = ::testing::TempDir() + "page_serve.yaml";
  std::ofstream(tf) << Textarea(dom, "train-request");
  std::ofstream(sf) << Textarea(dom, "serve-request");
  EXPECT_EQ(json::parse(Shell(std::string(GPUPLAN_BINARY) + " --json plan train -f " + tf)),
            train_doc);
  EXPECT_EQ(json::parse(Shell(std::string(GPUPLAN_BINARY) + " --json plan infer -f " + sf)),
            serve_doc);

  // One screenshot per chart, kept as test artifacts.
  const std::string dir = std::string(GPUPLAN_BINARY_DIR) + "/browser_artifacts";
  mkdir(dir.c_str(), 0755);
  for (const auto& [id, form] : {std::pair{"chart-pareto", "train"},
                                 {"chart-memory", "train"},
                                 {"chart-step", "train"},
                                 {"chart-day", "serve"}}) {
    const std::string png = dir + "/" + id + ".png";
    std::remove(png.c_str());
    Shell(chromium + flags + " --virtual-time-budget=60000 --window-size=800,520 --screenshot=" +
          png + " '" + srv.url() + "/?auto=" + form + "&only=" + id + "' >/dev/null 2>&1");
    struct stat st {};
    EXPECT_EQ(stat(png.c_str(), &st), 0) << png;
    EXPECT_GT(st.st_size, 5000) << png << " looks empty";
  }
  EXPECT_EQ(srv.Stop(), 0);
}

}  // namespace
}  // namespace gpuplan
