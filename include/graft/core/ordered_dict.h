#pragma once
/// OrderedDict: a map that remembers insertion order (libtorch's torch::OrderedDict), and
/// StateDict, the name -> tensor map that modules, optimizers and checkpoints exchange.
#include <cstddef>
#include <initializer_list>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "graft/core/error.h"
#include "graft/core/tensor.h"

namespace graft {

/// Keys in insertion order with O(1) lookup. Inserting an existing key throws; so does
/// operator[] on a missing one (the message names the key and `key_description`).
template <class Key, class Value>
class OrderedDict {
 public:
  /// One entry: key() and value(), as in libtorch.
  class Item {
   public:
    Item(Key key, Value value) : pair_(std::move(key), std::move(value)) {}
    const Key& key() const { return pair_.first; }
    Value& value() { return pair_.second; }
    const Value& value() const { return pair_.second; }
    Value& operator*() { return pair_.second; }
    const Value& operator*() const { return pair_.second; }
    Value* operator->() { return &pair_.second; }
    const Value* operator->() const { return &pair_.second; }
    const std::pair<Key, Value>& pair() const { return pair_; }

   private:
    std::pair<Key, Value> pair_;
  };
  using iterator = typename std::vector<Item>::iterator;
  using const_iterator = typename std::vector<Item>::const_iterator;

  /// `key_description` names what the keys are in error messages ("Key", "Parameter", ...).
  explicit OrderedDict(std::string key_description = "Key") : key_description_(std::move(key_description)) {}
  OrderedDict(std::initializer_list<Item> items) : OrderedDict() {
    for (const auto& it : items) insert(it.key(), it.value());
  }

  const std::string& key_description() const { return key_description_; }

  /// Appends key -> value; throws if the key is already present.
  Value& insert(Key key, Value value) {
    if (index_.count(key)) throw KeyError(detail::str(key_description_, " '", key, "' already defined"));
    items_.emplace_back(key, std::move(value));
    try {
      index_.emplace(std::move(key), items_.size() - 1);
    } catch (...) {
      items_.pop_back();  // a failed insert leaves the dict as it was
      throw;
    }
    return items_.back().value();
  }
  /// Inserts, or replaces the value of an existing key (keeping its position).
  Value& insert_or_assign(Key key, Value value) {
    if (auto* v = find(key)) return *v = std::move(value);
    return insert(std::move(key), std::move(value));
  }
  /// Inserts every item of `other` (replacing existing keys' values).
  void update(const OrderedDict& other) {
    for (const auto& it : other) insert_or_assign(it.key(), it.value());
  }
  /// Pointer to the value, or nullptr.
  Value* find(const Key& key) {
    auto it = index_.find(key);
    return it == index_.end() ? nullptr : &items_[it->second].value();
  }
  const Value* find(const Key& key) const {
    auto it = index_.find(key);
    return it == index_.end() ? nullptr : &items_[it->second].value();
  }
  bool contains(const Key& key) const { return index_.count(key) != 0; }
  Value& operator[](const Key& key) {
    if (auto* v = find(key)) return *v;
    throw KeyError(detail::str(key_description_, " '", key, "' is not defined"));
  }
  const Value& operator[](const Key& key) const {
    if (auto* v = find(key)) return *v;
    throw KeyError(detail::str(key_description_, " '", key, "' is not defined"));
  }
  /// Removes `key` (order of the rest is kept); throws if missing.
  void erase(const Key& key) {
    auto it = index_.find(key);
    if (it == index_.end()) throw KeyError(detail::str(key_description_, " '", key, "' is not defined"));
    items_.erase(items_.begin() + static_cast<std::ptrdiff_t>(it->second));
    index_.clear();
    for (size_t i = 0; i < items_.size(); ++i) index_.emplace(items_[i].key(), i);
  }
  void clear() {
    items_.clear();
    index_.clear();
  }

  size_t size() const { return items_.size(); }
  bool is_empty() const { return items_.empty(); }
  bool empty() const { return items_.empty(); }
  Item& operator[](size_t i) { return items_.at(i); }
  const Item& operator[](size_t i) const { return items_.at(i); }
  iterator begin() { return items_.begin(); }
  iterator end() { return items_.end(); }
  const_iterator begin() const { return items_.begin(); }
  const_iterator end() const { return items_.end(); }
  const std::vector<Item>& items() const { return items_; }
  std::vector<Key> keys() const {
    std::vector<Key> r;
    r.reserve(items_.size());
    for (const auto& it : items_) r.push_back(it.key());
    return r;
  }
  std::vector<Value> values() const {
    std::vector<Value> r;
    r.reserve(items_.size());
    for (const auto& it : items_) r.push_back(it.value());
    return r;
  }

 private:
  std::string key_description_;
  std::vector<Item> items_;
  std::unordered_map<Key, size_t> index_;
};

/// Name -> tensor, in order: what Module::state_dict, Optimizer::state_dict and
/// graft::save/load exchange. Names use dots for nesting ("layer1.0.weight",
/// "state.0.exp_avg").
using StateDict = OrderedDict<std::string, Tensor>;

}  // namespace graft
