// The Python module weft._torch_backend: ProcessGroupWeft, a torch.distributed ProcessGroup
// (weft/torch.py registers it as the backend "weft").
#include <pybind11/chrono.h>
#include <torch/csrc/utils/pybind.h>

#include "python/torch_backend/process_group_weft.h"

namespace py = pybind11;

PYBIND11_MODULE(_torch_backend, m) {
  // The base class's binding lives there: it must be registered before ours.
  py::module_::import("torch.distributed");
  py::class_<weft::torch_backend::ProcessGroupWeft, c10d::ProcessGroup,
             c10::intrusive_ptr<weft::torch_backend::ProcessGroupWeft>>(m, "ProcessGroupWeft")
      .def(py::init<const c10::intrusive_ptr<c10d::Store>&, int, int, std::chrono::milliseconds>(),
           py::arg("store"), py::arg("rank"), py::arg("size"), py::arg("timeout"),
           py::call_guard<py::gil_scoped_release>());
  m.def("_drain_all", &weft::torch_backend::ProcessGroupWeft::drainAll,
        py::call_guard<py::gil_scoped_release>(),
        "Waits until every weft group's calls so far have run (weft.torch calls it at exit).");
}
