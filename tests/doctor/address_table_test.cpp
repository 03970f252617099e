// The doctor's address-keyed table (src/doctor/address_table.h), against std::unordered_map: every
// insert, lookup and erase of a long random run (addresses in the strides an allocator hands
// out, so that runs of neighbouring slots form and erases must shift entries back across them
// and across the end of the array) agrees, and a walk visits exactly the live entries; trim()
// keeps the slots of the last interval's peak and gives back the rest.
#include <random>
#include <unordered_map>

#include "../../src/doctor/address_table.h"
#include "support/test_util.h"

using graft::doctor::detail::AddressTable;

namespace {

struct Entry {
  uint64_t value = 0;
  uint32_t generation = 0;
};

/// `n` addresses spaced by `stride` bytes from one base, as a pool hands out blocks.
std::vector<const int*> addresses(size_t n, size_t stride) {
  static std::vector<char> arena(1 << 24);
  std::vector<const int*> out;
  for (size_t i = 0; i < n; ++i) out.push_back(reinterpret_cast<const int*>(arena.data() + 64 + i * stride));
  return out;
}

void agree(const AddressTable<int, Entry>& table, const std::unordered_map<const int*, uint64_t>& reference,
           const std::vector<const int*>& keys) {
  ASSERT_EQ(table.size(), reference.size());
  for (const int* k : keys) {
    const Entry* e = table.find(k);
    auto it = reference.find(k);
    ASSERT_EQ(e != nullptr, it != reference.end());
    if (e) {
      EXPECT_EQ(e->value, it->second);
    }
  }
  size_t walked = 0;
  for (const auto& [k, e] : table) {
    auto it = reference.find(k);
    ASSERT_NE(it, reference.end());
    EXPECT_EQ(e.value, it->second);
    ++walked;
  }
  EXPECT_EQ(walked, reference.size());
}

}  // namespace

TEST(AddressTable, AgreesWithAnUnorderedMapOverARandomRun) {
  for (size_t stride : {16u, 48u, 4096u}) {
    const std::vector<const int*> keys = addresses(3000, stride);
    AddressTable<int, Entry> table;
    std::unordered_map<const int*, uint64_t> reference;
    std::mt19937_64 rng(stride);
    for (int op = 0; op < 60000; ++op) {
      const int* k = keys[rng() % (op < 20000 ? keys.size() : keys.size() / 8)];  // later: dense erases
      const uint64_t v = rng();
      switch (rng() % 3) {
        case 0: {
          auto [e, fresh] = table.try_emplace(k);
          EXPECT_EQ(fresh, reference.count(k) == 0);
          if (fresh) {
            EXPECT_EQ(e->value, 0u);  // a new entry starts value-initialized
          }
          e->value = v;
          reference[k] = v;
          break;
        }
        case 1: {
          Entry out;
          const bool had = table.erase(k, &out);
          auto it = reference.find(k);
          ASSERT_EQ(had, it != reference.end());
          if (had) {
            EXPECT_EQ(out.value, it->second);
            reference.erase(it);
          }
          break;
        }
        default:
          EXPECT_EQ(table.count(k), reference.count(k));
      }
      if (op % 5000 == 0) agree(table, reference, keys);
    }
    agree(table, reference, keys);
  }
}

TEST(AddressTable, EmptiesAndRefills) {
  const std::vector<const int*> keys = addresses(1000, 32);
  AddressTable<int, Entry> table;
  EXPECT_EQ(table.find(keys[0]), nullptr);
  EXPECT_FALSE(table.erase(keys[0], nullptr));
  for (const int* k : keys) table.try_emplace(k).first->generation = 7;
  EXPECT_EQ(table.size(), keys.size());
  for (size_t i = 0; i < keys.size(); i += 2) EXPECT_TRUE(table.erase(keys[i], nullptr));
  EXPECT_EQ(table.size(), keys.size() / 2);
  for (size_t i = 0; i < keys.size(); ++i) EXPECT_EQ(table.count(keys[i]), i % 2);
  table.clear();
  EXPECT_TRUE(table.empty());
  EXPECT_EQ(table.begin() != table.end(), false);
  auto [e, fresh] = table.try_emplace(keys[3]);
  EXPECT_TRUE(fresh);
  EXPECT_EQ(e->generation, 0u);
  EXPECT_EQ(table.size(), 1u);
}

TEST(AddressTable, TrimKeepsAStepsPeakAndGivesBackASpike) {
  const std::vector<const int*> keys = addresses(3000, 16);
  AddressTable<int, Entry> table;
  for (size_t i = 0; i < keys.size(); ++i) table.try_emplace(keys[i]).first->value = i;
  EXPECT_GE(table.slot_count(), 2 * keys.size());
  for (size_t i = 10; i < keys.size(); ++i) EXPECT_TRUE(table.erase(keys[i], nullptr));
  const size_t at_peak = table.slot_count();
  table.trim();  // the peak since the last trim was 3000: its slots stay for the next step
  EXPECT_EQ(table.slot_count(), at_peak);
  table.trim();  // a whole interval with 10 entries: down to the smallest table
  EXPECT_EQ(table.slot_count(), 64u);
  ASSERT_EQ(table.size(), 10u);
  for (size_t i = 0; i < 10; ++i) EXPECT_EQ(table.find(keys[i])->value, i);
  for (size_t i = 0; i < 10; ++i) EXPECT_TRUE(table.erase(keys[i], nullptr));
  table.trim();
  table.trim();  // empty for a whole interval: nothing kept
  EXPECT_EQ(table.slot_count(), 0u);
  EXPECT_TRUE(table.try_emplace(keys[5]).second);
}
