#include "suite/experiment.h"

#include <algorithm>
#include <stdexcept>

#include "core/metrics.h"

namespace kb {

Experiment& Experiment::axis(const std::string& key, std::vector<int64_t> values) {
  axes_.emplace_back(key, std::move(values));
  return *this;
}
Experiment& Experiment::point(Shape shape) {
  extra_.push_back(std::move(shape));
  return *this;
}
Experiment& Experiment::protocol(Protocol p, int decode_runs) {
  protocol_ = p;
  decode_runs_ = decode_runs;
  return *this;
}

std::vector<Point> Experiment::points() const {
  std::vector<Shape> product;
  if (!axes_.empty()) {
    product.emplace_back();
    for (const auto& [key, values] : axes_) {
      std::vector<Shape> next;
      for (const auto& s : product)
        for (int64_t v : values) {
          Shape t = s;
          t.set(key, v);
          next.push_back(t);
        }
      product = std::move(next);
    }
  }
  std::vector<Point> pts;
  const auto add = [&](Point p) {
    if (!variant_key_.empty()) p.shape.set_label(variant_key_, p.variant);
    if (!applies_ || applies_(p)) pts.push_back(std::move(p));
  };
  for (DType d : dtypes_)
    for (const auto& var : variants_) {
      for (const auto& s : product) add({s, d, var, true});
      for (const auto& s : extra_) add({s, d, var, false});
    }
  return pts;
}

std::string Experiment::axes_text() const {
  std::string t;
  for (const auto& [key, values] : axes_) {
    t += key + "={";
    for (size_t i = 0; i < values.size(); ++i) t += (i ? "," : "") + std::to_string(values[i]);
    t += "} ";
  }
  if (!extra_.empty()) t += "+" + std::to_string(extra_.size()) + " extra shapes ";
  t += "dtype={";
  for (size_t i = 0; i < dtypes_.size(); ++i)
    t += std::string(i ? "," : "") + dtype_name(dtypes_[i]);
  t += "}";
  if (variants_.size() > 1 || !variants_.front().empty()) {
    t += " variant={";
    for (size_t i = 0; i < variants_.size(); ++i) t += (i ? "," : "") + variants_[i];
    t += "}";
  }
  return t;
}

Registry& Registry::instance() {
  static Registry r;  // constructed on first use: safe from static-init order
  return r;
}

const Experiment* Registry::find(const std::string& name) const {
  for (const auto& x : experiments_)
    if (x.name() == name) return &x;
  return nullptr;
}

void Registry::add(Experiment e) {
  if ((!e.work_for_defined() || !e.make_defined()) && !e.is_across_devices())
    throw std::logic_error("experiment '" + e.name() + "' lacks work() or make()");
  for (const Metric& m : e.metric_list())
    if (!metric_direction(m.name))
      throw std::logic_error("experiment '" + e.name() + "': metric '" + m.name +
                             "' names no unit kgate can judge (docs/metrics.md)");
  if (find(e.name())) throw std::logic_error("experiment '" + e.name() + "' registered twice");
  if (!e.variant_shape_key().empty() && e.has_seed_mean())
    throw std::logic_error("experiment '" + e.name() +
                           "': variant_in_shape() and seed_mean() (rows of shape=mean) together");
  experiments_.push_back(std::move(e));
  std::sort(experiments_.begin(), experiments_.end(),
            [](const Experiment& a, const Experiment& b) { return a.name() < b.name(); });
}

}  // namespace kb
