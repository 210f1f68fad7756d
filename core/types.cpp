#include "core/types.h"

#include <stdexcept>

namespace kb {

// In the order of DType's enumerators.
const char* dtype_name(DType d) {
  static const char* const names[] = {"bfloat16", "float16", "float32", "int8", "fp8_e4m3"};
  return names[static_cast<int>(d)];
}

int dtype_size(DType d) {
  static const int sizes[] = {2, 2, 4, 1, 1};
  return sizes[static_cast<int>(d)];
}

namespace {
// Sets `key` where `kv` has it, else appends it: a point's axes keep their order.
template <typename V>
void put(std::vector<std::pair<std::string, V>>& kv, const std::string& key, V value) {
  for (auto& [k, v] : kv)
    if (k == key) {
      v = std::move(value);
      return;
    }
  kv.emplace_back(key, std::move(value));
}
}  // namespace

void Shape::set(const std::string& key, int64_t value) { put(kv_, key, value); }

bool Shape::has(const std::string& key) const {
  for (const auto& kv : kv_)
    if (kv.first == key) return true;
  return false;
}

int64_t Shape::operator[](const std::string& key) const {
  for (const auto& kv : kv_)
    if (kv.first == key) return kv.second;
  throw std::out_of_range("shape " + str() + " has no axis '" + key + "'");
}

void Shape::set_label(const std::string& key, std::string value) {
  put(labels_, key, std::move(value));
}

std::string Shape::str() const {
  std::string s;
  for (const auto& kv : kv_) {
    if (!s.empty()) s += ';';
    s += kv.first + "=" + std::to_string(kv.second);
  }
  for (const auto& kv : labels_) {
    if (!s.empty()) s += ';';
    s += kv.first + "=" + kv.second;
  }
  return s;
}

}  // namespace kb
