// OrderedDict / StateDict: insertion order, duplicate and missing keys give KeyError.
#include "support/test_util.h"

using namespace graft;

TEST(OrderedDict, KeepsInsertionOrderAndLooksUp) {
  OrderedDict<std::string, int> d;
  d.insert("b", 2);
  d.insert("a", 1);
  d.insert("c", 3);
  EXPECT_EQ(d.keys(), (std::vector<std::string>{"b", "a", "c"}));
  EXPECT_EQ(d.values(), (std::vector<int>{2, 1, 3}));
  EXPECT_EQ(d["a"], 1);
  EXPECT_EQ(d[size_t{2}].key(), "c");
  EXPECT_TRUE(d.contains("c"));
  EXPECT_EQ(d.find("z"), nullptr);
  d.insert_or_assign("a", 10);  // keeps the position
  EXPECT_EQ(d[size_t{1}].value(), 10);
  d.erase("b");
  EXPECT_EQ(d.keys(), (std::vector<std::string>{"a", "c"}));
  EXPECT_EQ(d["c"], 3);  // index rebuilt after erase
}

TEST(OrderedDict, DuplicateAndMissingKeysThrowKeyError) {
  OrderedDict<std::string, int> d("Parameter");
  d.insert("w", 1);
  EXPECT_THROW_MSG(d.insert("w", 2), KeyError, "Parameter 'w' already defined");
  EXPECT_EQ(d["w"], 1);  // the failed insert changed nothing
  EXPECT_THROW_MSG(d["v"], KeyError, "Parameter 'v' is not defined");
  EXPECT_THROW_MSG(d.erase("v"), KeyError, "Parameter 'v' is not defined");
}

TEST(OrderedDict, StateDictHoldsTensorsByName) {
  StateDict sd;
  sd.insert("layer.weight", ones({2, 2}));
  sd.insert("layer.bias", zeros({2}));
  StateDict other;
  other.insert("layer.bias", ones({2}));
  other.insert("extra", zeros({1}));
  sd.update(other);
  EXPECT_EQ(sd.keys(), (std::vector<std::string>{"layer.weight", "layer.bias", "extra"}));
  EXPECT_EQ(sd["layer.bias"].sum().item<float>(), 2.0f);
}
