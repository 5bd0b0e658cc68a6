// SPDX-License-Identifier: Apache-2.0
// The Bridge class over its engine (engine.hpp): no Fast DDS here, so the `cerulion` program links
// it without loading Fast DDS.

#include "engine.hpp"

namespace cerulion::bridge {

const char* to_string(Direction d) noexcept {
  switch (d) {
    case Direction::Export: return "export";
    case Direction::Import: return "import";
    case Direction::Both: return "both";
  }
  return "both";
}

Result<Bridge> Bridge::create(BridgeOptions options) {
  auto engine = detail::create_engine(std::move(options));
  if (!engine) return engine.status();
  return Bridge(std::move(*engine));
}

Bridge::Bridge(std::unique_ptr<detail::BridgeImpl> impl) : impl_(std::move(impl)) {}
Bridge::Bridge(Bridge&&) noexcept = default;
Bridge& Bridge::operator=(Bridge&&) noexcept = default;
Bridge::~Bridge() {
  if (impl_) stop();
}

Status Bridge::start() { return impl_->start(); }
void Bridge::stop() { impl_->stop(); }
BridgeStatus Bridge::status() const { return impl_->status(); }

}  // namespace cerulion::bridge
