// The report's verdict from C++ (graft::doctor::Session::verdict): "nothing grows" only when
// allocated memory and the live graphs were flat after the warm-up; too few steps give no
// verdict; growth without a finding is said with its figures; an error the program stopped
// with leads the report and the timeline.
#include <nlohmann/json.hpp>

#include "support/test_util.h"

using namespace graft;

namespace {

struct Model {
  nn::Linear net{nn::Linear(8, 2)};
  optim::SGD opt{net->parameters(), optim::SGDOptions(0.01)};
  Tensor x = randn({16, 8});
  Tensor y = randn({16, 2});
  Tensor step() {
    opt.zero_grad();
    Tensor out = net->forward(x);
    mse_loss(out, y).backward();
    opt.step();
    return out.detach();
  }
};

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST(DoctorVerdict, FlatIsTheOnlyNothingGrows) {
  Model m;
  doctor::Session dr;
  for (int i = 0; i < 8; ++i) m.step();
  const auto v = dr.verdict();
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0],
            "No findings: nothing grows from step to step (allocated memory and live graphs were flat from step 2 "
            "to step 8).");
  EXPECT_TRUE(contains(dr.report(), v[0]));
}

TEST(DoctorVerdict, KeptTensorsWithoutAGraphAreLD011AndTheGrowthIsSaid) {
  Model m;
  std::vector<Tensor> kept;
  {
    doctor::Session dr;
    for (int i = 0; i < 8; ++i) kept.push_back(m.step());
    ASSERT_EQ(dr.findings().size(), 1u);
    EXPECT_EQ(dr.findings()[0].id, "LD011");
    const auto v = dr.verdict();
    ASSERT_EQ(v.size(), 1u);
    EXPECT_TRUE(contains(v[0], "Memory grew: allocated memory grew from ")) << v[0];
    EXPECT_TRUE(contains(v[0], "(about 512 B per step)")) << v[0];
    EXPECT_FALSE(contains(dr.report(), "nothing grows"));
  }
}

TEST(DoctorVerdict, GrowthNoRuleNamesIsSaidWithItsFigures) {
  Model m;
  Tensor buffer = zeros({0, 2});
  {
    doctor::Session dr;
    // one tensor, made again each step one batch longer: no rule counts it (it is always the
    // current step's), but allocated memory grows
    for (int i = 0; i < 8; ++i) buffer = cat({buffer, m.step()});
    EXPECT_TRUE(dr.findings().empty()) << doctor::format_findings(dr.findings());
    const auto v = dr.verdict();
    ASSERT_EQ(v.size(), 1u);
    EXPECT_TRUE(contains(v[0], "No finding names a cause, but allocated memory grew from ")) << v[0];
    EXPECT_TRUE(contains(v[0], " B per step)")) << v[0];  // 128 B a step, in blocks of 512 B
    EXPECT_FALSE(contains(dr.report(), "nothing grows"));
  }
}

TEST(DoctorVerdict, ACacheThatGrowsWhileAllocatedIsFlatIsSaidWithItsAdvice) {
  doctor::Session dr;
  for (int i = 1; i <= 6; ++i) {
    {
      // above 10 MiB a request is its own segment (rounded to 2 MiB): a bigger one each step does
      // not fit in the cached ones
      Tensor t = empty({(5 << 19) + i * (1 << 19)});
      t.fill_(1);
    }
    dr.step();  // nothing allocated at any step's end
  }
  const auto v = dr.verdict();
  ASSERT_EQ(v.size(), 2u) << v[0];
  EXPECT_TRUE(contains(v[0], "No findings: nothing grows")) << v[0];
  EXPECT_TRUE(contains(v[1], "But the allocator's cache (reserved memory) grew from ")) << v[1];
  EXPECT_TRUE(contains(v[1], "graft.cpu.empty_cache()")) << v[1];
  empty_cache(kCPU);
}

TEST(DoctorVerdict, TooFewStepsGiveNone) {
  Model m;
  doctor::Session dr;
  for (int i = 0; i < 3; ++i) m.step();
  const auto v = dr.verdict();
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0], "Only 3 steps watched: a verdict needs at least 5 (warm-up 2 + confirmation 3), so none is given.");
}

TEST(DoctorVerdict, AnErrorLeadsTheReportAndTheTimeline) {
  Model m;
  doctor::Session dr;
  for (int i = 0; i < 6; ++i) m.step();
  dr.note_stopped("ValueError: bad batch");
  const auto v = dr.verdict();
  ASSERT_GE(v.size(), 1u);
  EXPECT_EQ(v[0], "The program stopped with an error in step 7: ValueError: bad batch.");
  const auto j = nlohmann::json::parse(dr.timeline_json());
  EXPECT_EQ(j["stopped"]["error"], "ValueError: bad batch");
  EXPECT_EQ(j["verdict"][0], v[0]);
  EXPECT_TRUE(contains(dr.html(), "<div class=\"stopped\">"));
}
