// The documentation's promises that a test can keep: every relative link in README.md and docs/ resolves (the
// file, and the heading a #fragment names); the README's two opening commands are exactly what .ci/run runs;
// the options reference names every option `lepus --help` lists, and docs/help.md is the current `--help`
// text.
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <set>

#include "e2e_util.h"

namespace lepus::e2e {
namespace {

namespace fs = std::filesystem;
const fs::path kRoot = LEPUS_SOURCE_DIR;

std::vector<fs::path> markdown_files() {
  std::vector<fs::path> files = {kRoot / "README.md"};
  for (const auto& e : fs::recursive_directory_iterator(kRoot / "docs"))
    if (e.is_regular_file() && e.path().extension() == ".md") files.push_back(e.path());
  return files;
}

// Text outside fenced code blocks and inline code spans (a link there is an example, not a link).
std::string prose_of(const std::string& text) {
  std::string out;
  bool fenced = false;
  for (const auto& line : lines_of(text)) {
    if (line.rfind("```", 0) == 0) {
      fenced = !fenced;
      continue;
    }
    if (fenced) continue;
    bool code = false;
    for (char c : line) {
      if (c == '`')
        code = !code;
      else if (!code)
        out += c;
    }
    out += '\n';
  }
  return out;
}

// GitHub's anchor for a heading: lower case, punctuation dropped (but '-' and '_'), spaces as '-'.
std::string anchor_of(const std::string& heading) {
  std::string a;
  for (unsigned char c : heading) {
    if (std::isalnum(c) || c == '-' || c == '_' || c >= 0x80)
      a += static_cast<char>(std::tolower(c));
    else if (c == ' ')
      a += '-';
  }
  return a;
}

std::set<std::string> anchors_in(const fs::path& file) {
  std::set<std::string> out;
  bool fenced = false;
  for (const auto& line : lines_of(read_file(file.string()))) {
    if (line.rfind("```", 0) == 0) fenced = !fenced;
    if (fenced || line.empty() || line[0] != '#') continue;
    const size_t text = line.find_first_not_of('#');
    if (text == std::string::npos || line[text] != ' ') continue;
    std::string heading;
    for (char c : line.substr(text + 1))
      if (c != '`') heading += c;
    std::string a = anchor_of(heading);
    for (int n = 1; out.count(a); ++n) a = anchor_of(heading) + "-" + std::to_string(n);
    out.insert(a);
  }
  return out;
}

TEST(Docs, EveryRelativeLinkResolves) {
  const std::regex link(R"(\]\(([^)\s]+)\))");
  int checked = 0;
  for (const auto& file : markdown_files()) {
    const std::string prose = prose_of(read_file(file.string()));
    for (auto it = std::sregex_iterator(prose.begin(), prose.end(), link); it != std::sregex_iterator();
         ++it) {
      const std::string target = (*it)[1];
      if (target.find("://") != std::string::npos || target.rfind("mailto:", 0) == 0) continue;
      const size_t hash = target.find('#');
      const std::string path = target.substr(0, hash);
      const fs::path resolved = path.empty() ? file : (file.parent_path() / path).lexically_normal();
      ++checked;
      EXPECT_TRUE(fs::exists(resolved))
          << file.lexically_relative(kRoot) << ": link to " << target << " does not resolve";
      if (hash != std::string::npos && fs::is_regular_file(resolved) && resolved.extension() == ".md") {
        EXPECT_TRUE(anchors_in(resolved).count(target.substr(hash + 1)))
            << file.lexically_relative(kRoot) << ": link to " << target << ": no such heading";
      }
    }
  }
  EXPECT_GT(checked, 40);
}

// The README opens with exactly two commands in one ```sh block, and .ci/run runs each of them as written.
TEST(Docs, ReadmeCommandsAreWhatCiRuns) {
  const std::string readme = read_file((kRoot / "README.md").string());
  const size_t open = readme.find("```sh\n");
  ASSERT_NE(open, std::string::npos);
  ASSERT_LT(open, readme.find("\n## ")) << "the README's commands come before its first section";
  const auto commands = lines_of(readme.substr(open + 6, readme.find("\n```", open) - open - 6));
  ASSERT_EQ(commands.size(), 2u);
  const auto ci = lines_of(read_file((kRoot / ".ci/run").string()));
  for (const auto& c : commands)
    EXPECT_NE(std::find(ci.begin(), ci.end(), c), ci.end())
        << ".ci/run does not run the README's command: " << c;
  EXPECT_LE(lines_of(readme).size(), 300u);
}

// The options reference (docs/options.md, and the --daemon and --distributed pages it links to for theirs)
// names every option --help lists (the reference drifts otherwise).
TEST(Docs, OptionsReferenceNamesEveryOption) {
  const std::string d = scratch_dir("docs_options");
  ASSERT_EQ(run_lepus("--help > " + d + "/out.txt"), 0);
  std::string reference;
  for (const char* page : {"docs/options.md", "docs/daemon.md", "docs/distributed.md"})
    reference += read_file((kRoot / page).string());
  ASSERT_FALSE(reference.empty());
  std::stringstream help(read_file(d + "/out.txt"));
  std::string token;
  int checked = 0;
  while (help >> token) {
    if (token.rfind("--", 0) != 0 || token.size() < 3) continue;
    const std::string name =
        token.substr(0, token.find_first_not_of("abcdefghijklmnopqrstuvwxyz_-0123456789", 2));
    if (name.size() < 3) continue;
    EXPECT_NE(reference.find("`" + name), std::string::npos)
        << name << " is not in docs/options.md (or daemon.md, distributed.md)";
    ++checked;
  }
  EXPECT_GT(checked, 60);
}

// docs/help.md is `lepus --help` as it is now (utl/options_doc writes it).
TEST(Docs, HelpTextIsCurrent) {
  const std::string d = scratch_dir("docs_help");
  ASSERT_EQ(run_lepus("--help > " + d + "/help.txt"), 0);
  const std::string doc = read_file((kRoot / "docs/help.md").string());
  const std::string help = read_file(d + "/help.txt");
  ASSERT_FALSE(help.empty());
  EXPECT_NE(doc.find("```\n" + help + "```\n"), std::string::npos)
      << "docs/help.md is not the current `lepus --help`: run utl/options_doc";
}

// The model fuzzer's dictionary names every option of the table (a model file holds option names).
TEST(Docs, ModelFuzzDictionaryIsCurrent) {
  const std::string d = scratch_dir("docs_dict");
  ASSERT_EQ(run_lepus("--help > " + d + "/help.txt"), 0);
  const std::string help = read_file(d + "/help.txt");
  const std::string dict = read_file((kRoot / "test/fuzz/model.dict").string());
  size_t names = 0;
  for (size_t at = help.find("\n  "); at != std::string::npos; at = help.find("\n  ", at + 1)) {
    size_t name = help.find("--", at);  // "  --name" or "  -x [ --name ]"
    if (name == std::string::npos || name > at + 9) continue;
    name += 2;
    const size_t end = help.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_", name);
    const std::string option = help.substr(name, end - name);
    ++names;
    EXPECT_NE(dict.find("\"" + option + "\""), std::string::npos)
        << "test/fuzz/model.dict lacks --" << option << ": run utl/options_doc";
  }
  EXPECT_GT(names, 100u);
}

}  // namespace
}  // namespace lepus::e2e
