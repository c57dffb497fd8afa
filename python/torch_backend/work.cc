#include "python/torch_backend/work.h"

#include <ATen/core/ivalue.h>

namespace weft::torch_backend {

WeftWork::WeftWork(int rank, c10d::OpType type, const char* title, std::vector<at::Tensor> outputs)
    : c10d::Work(rank, type, title),
      outputs_(std::move(outputs)),
      future_(
          c10::make_intrusive<c10::ivalue::Future>(c10::ListType::create(c10::TensorType::get()))) {
}

void WeftWork::complete(const std::exception_ptr& error) {
  // The future first: wait() returning means its callbacks (DDP's hooks) have been run.
  if (error) {
    future_->setError(error);
  } else {
    future_->markCompleted(c10::IValue(outputs_));
  }
  finish(error);
}

}  // namespace weft::torch_backend
