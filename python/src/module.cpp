// SPDX-License-Identifier: Apache-2.0
// fusekit._core: the nanobind module. It turns DLPack arrays (NumPy, CuPy,
// PyTorch) into views without copying, checks their device and strides,
// picks the backend from the arrays' device (fusekit::cpu for host memory,
// fusekit::cuda on the caller's stream for CUDA memory), releases the GIL
// and calls calls.hpp. fusekit/__init__.py is the public face: it allocates
// outputs in the input's framework and finds the current stream.

#include "calls_fwd.hpp"

#include <fusekit/threads.hpp>

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <optional>
#include <string>
#include <utility>

#if FUSEKIT_PYTHON_CUDA
#include <cuda_runtime_api.h>
#endif

namespace nb = nanobind;
using namespace nb::literals;

namespace fusekit_python {
namespace {

using in_array = nb::ndarray<nb::ro>;
using out_array = nb::ndarray<>;

/// Where a call's arrays live: every array of one call on the host, or every
/// one on the same CUDA device.
struct place {
  bool known = false;
  bool cuda = false;
  int device = 0;
  std::uintptr_t stream = 0;
  std::string first;
};

std::string where(bool cuda, int device) { return cuda ? "cuda:" + std::to_string(device) : std::string("the CPU"); }

dtype dtype_of(nb::dlpack::dtype d, const char* name) {
  auto const code = static_cast<nb::dlpack::dtype_code>(d.code);
  if (d.lanes == 1) {
    switch (code) {
      case nb::dlpack::dtype_code::Int:
        if (d.bits == 8) { return dtype::i8; }
        if (d.bits == 16) { return dtype::i16; }
        if (d.bits == 32) { return dtype::i32; }
        if (d.bits == 64) { return dtype::i64; }
        break;
      case nb::dlpack::dtype_code::UInt:
        if (d.bits == 8) { return dtype::u8; }
        if (d.bits == 16) { return dtype::u16; }
        if (d.bits == 32) { return dtype::u32; }
        if (d.bits == 64) { return dtype::u64; }
        break;
      case nb::dlpack::dtype_code::Float:
        if (d.bits == 16) { return dtype::f16; }
        if (d.bits == 32) { return dtype::f32; }
        if (d.bits == 64) { return dtype::f64; }
        break;
      case nb::dlpack::dtype_code::Bfloat:
        if (d.bits == 16) { return dtype::bf16; }
        break;
      case nb::dlpack::dtype_code::Bool:
        throw type_error(std::string(name) + " is bool: convert it to uint8 first (x.astype(np.uint8))");
      default:
        break;
    }
  }
  throw type_error(std::string(name) + " has an element type fusekit does not take (DLPack code " +
                   std::to_string(static_cast<int>(d.code)) + ", " + std::to_string(d.bits) +
                   " bits): it takes float32, float64, float16, bfloat16 and 8- to 64-bit integers");
}

/// A view of `a`, after checking that it lives where the call's other arrays
/// do, is C-contiguous and has `ndim` dimensions (any when ndim < 0).
template <class Array>
view view_of(const Array& a, const char* name, place& p, int ndim = -1) {
  int const type = a.device_type();
  bool const cuda = type == nb::device::cuda::value || type == nb::device::cuda_managed::value;
  if (!cuda && type != nb::device::cpu::value && type != nb::device::cuda_host::value) {
    throw std::invalid_argument(std::string(name) + " is on a device fusekit does not run on (DLPack device type " +
                                std::to_string(type) + "): it takes host (CPU) and CUDA arrays");
  }
  int const device = cuda ? a.device_id() : 0;
  if (!p.known) {
    p = place{true, cuda, device, p.stream, name};
  } else if (p.cuda != cuda || p.device != device) {
    throw std::invalid_argument(std::string(name) + " is on " + where(cuda, device) + " but " + p.first + " is on " +
                                where(p.cuda, p.device) + ": the arrays of one call must be on one device");
  }
  if (ndim >= 0 && static_cast<int>(a.ndim()) != ndim) {
    throw std::invalid_argument(std::string(name) + " has " + std::to_string(a.ndim()) + " dimensions; it must have " +
                                std::to_string(ndim));
  }
  std::int64_t expected = 1;
  for (auto i = static_cast<std::int64_t>(a.ndim()) - 1; i >= 0 && a.size() > 0; --i) {
    auto const extent = static_cast<std::int64_t>(a.shape(static_cast<std::size_t>(i)));
    if (extent != 1 && a.stride(static_cast<std::size_t>(i)) != expected) {
      throw std::invalid_argument(std::string(name) +
                                  " is not C-contiguous (a slice, a transpose or Fortran order): pass "
                                  "np.ascontiguousarray(" +
                                  name + ") (x.contiguous() for a torch tensor, cupy.ascontiguousarray for CuPy)");
    }
    expected *= extent;
  }
  view v;
  v.data = const_cast<void*>(static_cast<const void*>(a.data()));
  v.size = static_cast<std::int64_t>(a.size());
  v.type = dtype_of(a.dtype(), name);
  v.rows = a.ndim() == 2 ? static_cast<std::int64_t>(a.shape(0)) : v.size;
  v.cols = a.ndim() == 2 ? static_cast<std::int64_t>(a.shape(1)) : 1;
  v.name = name;
  return v;
}

std::string shape_text(const in_array& a) {
  std::string s = "(";
  for (std::size_t i = 0; i < a.ndim(); ++i) { s += (i ? ", " : "") + std::to_string(a.shape(i)); }
  return s + (a.ndim() == 1 ? ",)" : ")");
}

/// Elementwise arrays have one shape (fusekit checks sizes; a shape is Python's).
void expect_same_shape(const in_array& a, const char* a_name, const in_array& b, const char* b_name) {
  bool same = a.ndim() == b.ndim();
  for (std::size_t i = 0; same && i < a.ndim(); ++i) { same = a.shape(i) == b.shape(i); }
  if (!same) {
    throw std::invalid_argument(std::string(b_name) + " has shape " + shape_text(b) + " but " + a_name + " has shape " +
                                shape_text(a) + ": elementwise arrays have one shape");
  }
}

#if FUSEKIT_PYTHON_CUDA
/// Makes `device` current for a call, and the previous one current again after.
class device_scope {
 public:
  explicit device_scope(int device) {
    FUSEKIT_CUDA_TRY(cudaGetDevice(&previous_));
    if (previous_ != device) { FUSEKIT_CUDA_TRY(cudaSetDevice(device)); }
  }
  ~device_scope() { cudaSetDevice(previous_); }
  device_scope(const device_scope&) = delete;
  device_scope& operator=(const device_scope&) = delete;

 private:
  int previous_ = 0;
};
#endif

/// Why this module has no GPU backend (fusekit.cuda_unavailable): the CPU
/// module says that the build had none, or fusekit/__init__.py sets why the
/// GPU module did not load.
std::string& cuda_unavailable() {
  static std::string why = FUSEKIT_PYTHON_CUDA
                               ? std::string()
                               : std::string(
                                     "this build of fusekit has no GPU backend (it was built without a working "
                                     "nvcc): reinstall it with the CUDA toolkit (pip install ./python)");
  return why;
}

/// Runs f(policy) without the GIL: fusekit::cpu for host arrays,
/// fusekit::cuda on the caller's stream for CUDA arrays.
template <class F>
decltype(auto) on_policy(const place& p, F&& f) {
  if (!p.cuda) {
    nb::gil_scoped_release unlocked;
    return f(fusekit::cpu{});
  }
#if FUSEKIT_PYTHON_CUDA
  nb::gil_scoped_release unlocked;
  device_scope const scope(p.device);
  return f(fusekit::cuda{reinterpret_cast<cudaStream_t>(p.stream)});
#else
  throw std::invalid_argument(p.first + " is on " + where(true, p.device) +
                              " but fusekit's GPU backend is not loaded: " + cuda_unavailable());
#endif
}

/// Refuses GPU arrays for a call the GPU backend does not have yet.
void on_cpu_only(const place& p) {
  if (p.cuda) {
    throw std::invalid_argument(p.first + " is on " + where(true, p.device) +
                                ": the sums per segment and per row run on the CPU only so far (NumPy arrays)");
  }
}

fusekit::reduce_algorithm algorithm_of(const std::string& name) {
  if (name == "deterministic") { return fusekit::reduce_algorithm::deterministic; }
  // "cub" is the earlier name of run_to_run (cub::DeviceReduce on the GPU), kept for existing scripts.
  if (name == "run_to_run" || name == "cub") { return fusekit::reduce_algorithm::run_to_run; }
  if (name == "block_atomic") { return fusekit::reduce_algorithm::block_atomic; }
  if (name == "naive_atomic") { return fusekit::reduce_algorithm::naive_atomic; }
  throw std::invalid_argument("algorithm is '" + name +
                              "'; it must be 'deterministic', 'cub' (C++'s run_to_run; 'run_to_run' is taken too), "
                              "'block_atomic' or 'naive_atomic'");
}

/// The initial value of a reduction in the accumulator's kind; None gives
/// the operation's identity (0, +inf or the largest integer, -inf or the smallest).
scalar init_of(const nb::handle& init, dtype acc, reduce_op op) {
  scalar s;
  bool const real = acc == dtype::f32 || acc == dtype::f64;
  if (init.is_none()) {
    double const inf = std::numeric_limits<double>::infinity();
    if (op == reduce_op::min) {
      s = {inf, std::numeric_limits<std::int64_t>::max(), std::numeric_limits<std::uint64_t>::max()};
    } else if (op == reduce_op::max) {
      s = {-inf, std::numeric_limits<std::int64_t>::min(), 0};
    }
    return s;
  }
  try {
    if (real) {
      s.real = nb::cast<double>(init);
    } else if (acc == dtype::i64) {
      s.signed_int = nb::cast<std::int64_t>(init);
    } else {
      s.unsigned_int = nb::cast<std::uint64_t>(init);
    }
  } catch (const nb::cast_error&) {
    throw type_error(std::string("init must be a number that ") + dtype_name(acc) + " holds (the accumulator's type)");
  }
  return s;
}

/// GdOptions: gd_options with its progress callback held as a Python object,
/// so that no copy of the options touches a reference count without the GIL.
struct py_options : fusekit::gd_options {
  nb::object callback = nb::none();  ///< None when unset: readable, and settable by name
};

/// GdOptions's references for Python's cycle collector: a progress callback
/// that refers back to its options (through a closure or a module's globals)
/// is collected, with no leak at exit.
int options_traverse(PyObject* self, visitproc visit, void* arg) {
  Py_VISIT(Py_TYPE(self));
  if (!nb::inst_ready(self)) { return 0; }
  Py_VISIT(nb::inst_ptr<py_options>(self)->callback.ptr());
  return 0;
}

int options_clear(PyObject* self) {
  nb::inst_ptr<py_options>(self)->callback = nb::none();
  return 0;
}

PyType_Slot options_slots[] = {{Py_tp_traverse, reinterpret_cast<void*>(options_traverse)},
                               {Py_tp_clear, reinterpret_cast<void*>(options_clear)},
                               {0, nullptr}};

/// The options a fit runs with: a progress callback that takes the GIL.
fusekit::gd_options options_for_fit(const py_options& o) {
  fusekit::gd_options out = o;
  out.progress = nullptr;
  if (o.callback.is_valid() && !o.callback.is_none()) {
    PyObject* const f = o.callback.ptr();  // kept alive by `o` for the whole call
    out.progress = [f](const fusekit::fit_progress& p) {
      nb::gil_scoped_acquire locked;
      nb::handle const callback(f);
      callback(p);
    };
  }
  return out;
}

void bind_enums(nb::module_& m) {
  nb::enum_<fusekit::gd_method>(m, "GdMethod", "The update rule (gd_method).")
      .value("plain", fusekit::gd_method::plain)
      .value("nesterov", fusekit::gd_method::nesterov)
      .value("conjugate_gradient", fusekit::gd_method::conjugate_gradient);
  nb::enum_<fusekit::gd_preconditioner>(m, "GdPreconditioner", "A change of variables (gd_preconditioner).")
      .value("none", fusekit::gd_preconditioner::none)
      .value("jacobi", fusekit::gd_preconditioner::jacobi)
      .value("cholesky", fusekit::gd_preconditioner::cholesky);
  nb::enum_<fusekit::gd_formulation>(m, "GdFormulation", "How the gradient is computed (gd_formulation).")
      .value("automatic", fusekit::gd_formulation::automatic)
      .value("direct", fusekit::gd_formulation::direct)
      .value("gram", fusekit::gd_formulation::gram);
  nb::enum_<fusekit::gd_init>(m, "GdInit", "Where each output's descent starts (gd_init).")
      .value("zeros", fusekit::gd_init::zeros)
      .value("warm_start", fusekit::gd_init::warm_start)
      .value("uniform", fusekit::gd_init::uniform);
  nb::enum_<fusekit::fit_status>(m, "FitStatus", "How one output's training ended; only `converged` is a success.")
      .value("converged", fusekit::fit_status::converged)
      .value("max_iterations", fusekit::fit_status::max_iterations)
      .value("diverged", fusekit::fit_status::diverged)
      .value("stalled", fusekit::fit_status::stalled);
  nb::enum_<fusekit::stop_rule>(m, "StopRule", "Which rule ended an output's training.")
      .value("none", fusekit::stop_rule::none)
      .value("tolerance", fusekit::stop_rule::tolerance)
      .value("relative_tolerance", fusekit::stop_rule::relative_tolerance)
      .value("max_iterations", fusekit::stop_rule::max_iterations)
      .value("non_finite", fusekit::stop_rule::non_finite)
      .value("growth", fusekit::stop_rule::growth)
      .value("rounding_floor", fusekit::stop_rule::rounding_floor);
  nb::enum_<fusekit::fit_path>(m, "FitPath", "The code path a fit took.")
      .value("cpu", fusekit::fit_path::cpu)
      .value("single_launch", fusekit::fit_path::single_launch)
      .value("cublas", fusekit::fit_path::cublas)
      .value("mpi", fusekit::fit_path::mpi)
      .value("nccl_single_launch", fusekit::fit_path::nccl_single_launch)
      .value("nccl_cublas", fusekit::fit_path::nccl_cublas);
}

std::string number(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", v);
  return text;
}

void bind_reports(nb::module_& m) {
  nb::class_<fusekit::output_report>(m, "OutputReport", "How one output's training went.")
      .def_ro("iterations", &fusekit::output_report::iterations, "updates applied")
      .def_ro("grad_norm2", &fusekit::output_report::grad_norm2, "gradᵀgrad of the last gradient computed")
      .def_ro("status", &fusekit::output_report::status)
      .def_ro("rule", &fusekit::output_report::rule)
      .def("__repr__", [](const fusekit::output_report& o) {
        return std::string("OutputReport(") + fusekit::to_string(o.status) + " by " + fusekit::to_string(o.rule) +
               " after " + std::to_string(o.iterations) + " iterations, grad_norm2=" + number(o.grad_norm2) + ")";
      });
  nb::class_<fusekit::fit_report>(m, "FitReport", "What fit did, output by output.")
      .def_ro("outputs", &fusekit::fit_report::outputs, "one OutputReport per row of W")
      .def_ro("learning_rate", &fusekit::fit_report::learning_rate)
      .def_ro("formulation", &fusekit::fit_report::formulation)
      .def_ro("path", &fusekit::fit_report::path)
      .def_ro("method", &fusekit::fit_report::method)
      .def_ro("preconditioner", &fusekit::fit_report::preconditioner, "the preconditioner that ran")
      .def_prop_ro(
          "preconditioner_note", [](const fusekit::fit_report& r) { return std::string(r.preconditioner_note); },
          "why the preconditioner that ran is not the one asked for ('' when it is)")
      .def("all_converged", &fusekit::fit_report::all_converged)
      .def("most_iterations", &fusekit::fit_report::most_iterations)
      .def("summary", &fusekit::fit_report::summary)
      .def("__repr__", [](const fusekit::fit_report& r) { return "FitReport(" + r.summary() + ")"; });
  nb::class_<fusekit::fit_progress>(m, "FitProgress", "Where a long fit stands (GdOptions.progress).")
      .def_ro("iteration", &fusekit::fit_progress::iteration)
      .def_ro("running", &fusekit::fit_progress::running)
      .def_ro("worst_grad_norm2", &fusekit::fit_progress::worst_grad_norm2)
      .def_prop_ro("ended",
                   [](const fusekit::fit_progress& p) {
                     return std::vector<std::int64_t>(std::begin(p.ended), std::end(p.ended));
                   })
      .def_prop_ro("text", &fusekit::fit_progress::text, "one line for a log");
}

/// Sets GdOptions fields by name, or says which name is not one.
void set_fields(nb::handle self, const nb::kwargs& fields) {
  for (auto [key, value] : fields) {
    if (!nb::hasattr(self, key)) { throw type_error("GdOptions has no field '" + nb::cast<std::string>(key) + "'"); }
    nb::setattr(self, key, value);
  }
}

void bind_options(nb::module_& m) {
  using O = fusekit::gd_options;
  nb::class_<py_options>(m, "GdOptions",
                         "gd_options: GdOptions(method=GdMethod.conjugate_gradient, ...) or GdOptions.recommended()",
                         nb::type_slots(options_slots))
      .def(
          "__init__",
          [](nb::pointer_and_handle<py_options> self, const nb::kwargs& fields) {
            new (self.p) py_options();
            nb::inst_mark_ready(self.h);  // constructed: its fields may now be set by name
            set_fields(self.h, fields);
          },
          "fields"_a)
      .def_static(
          "recommended",
          [](const nb::kwargs& fields) {
            py_options o;
            static_cast<O&>(o) = O::recommended();
            nb::object self = nb::cast(std::move(o));
            set_fields(self, fields);
            return self;
          },
          "fields"_a, nb::sig("def recommended(**fields) -> GdOptions"),
          "Conjugate gradients with the Cholesky preconditioner, relative_tolerance 1e-13 and two refinement\n"
          "steps (gd_options::recommended()), with the given fields changed: the method for real data.")
      .def_rw("learning_rate", &O::learning_rate, nb::arg().none())
      .def_rw("tolerance", &O::tolerance, nb::arg().none())
      .def_rw("relative_tolerance", &O::relative_tolerance)
      .def_rw("max_iterations", &O::max_iterations)
      .def_rw("init", &O::init)
      .def_rw("seed", &O::seed)
      .def_rw("method", &O::method)
      .def_rw("formulation", &O::formulation)
      .def_rw("preconditioner", &O::preconditioner)
      .def_rw("stall_window", &O::stall_window)
      .def_rw("progress", &py_options::callback, nb::arg().none(), "called with a FitProgress (CPU only), or None")
      .def_rw("progress_every", &O::progress_every)
      .def_rw("refinement_steps", &O::refinement_steps)
      .def_rw("ridge", &O::ridge)
      .def_rw("fit_intercept", &O::fit_intercept)
      .def_ro_static("default_tolerance", &O::default_tolerance)
      .def_ro_static("min_relative_tolerance", &O::min_relative_tolerance)
      .def_ro_static("max_refinement_steps", &O::max_refinement_steps)
      .def("__repr__", [](const py_options& o) {
        auto opt = [](const std::optional<double>& v) { return v ? number(*v) : std::string("None"); };
        return "GdOptions(method=" + std::string(fusekit::to_string(o.method)) +
               ", preconditioner=" + fusekit::to_string(o.preconditioner) +
               ", formulation=" + fusekit::to_string(o.formulation) + ", learning_rate=" + opt(o.learning_rate) +
               ", tolerance=" + opt(o.tolerance) + ", relative_tolerance=" + number(o.relative_tolerance) +
               ", max_iterations=" + std::to_string(o.max_iterations) +
               ", refinement_steps=" + std::to_string(o.refinement_steps) + ", ridge=" + number(o.ridge) +
               ", fit_intercept=" + (o.fit_intercept ? "True" : "False") + ")";
      });
}

void bind_calls(nb::module_& m) {
  m.def(
      "hidden_layer",
      [](const in_array& grey, const in_array& w, const out_array& out, double scale, bool fused,
         std::uintptr_t stream) {
        place p;
        p.stream = stream;
        view const g = view_of(grey, "grey", p);
        view const wv = view_of(w, "w", p);
        view const o = view_of(out, "out", p);
        expect_same_shape(grey, "grey", w, "w");
        expect_same_shape(grey, "grey", in_array(out), "out");
        on_policy(p, [&](const auto& policy) { hidden_layer(policy, g, wv, o, scale, fused); });
      },
      "grey"_a, "w"_a, "out"_a, "scale"_a, "fused"_a, "stream"_a = 0);
  m.def(
      "transform",
      [](int code, const in_array& x, const std::optional<in_array>& w, const out_array& out, double scale,
         std::uintptr_t stream) {
        place p;
        p.stream = stream;
        view const xv = view_of(x, "x", p);
        std::optional<view> wv;
        if (w) {
          wv = view_of(*w, "w", p);
          expect_same_shape(x, "x", *w, "w");
        }
        view const o = view_of(out, "out", p);
        expect_same_shape(x, "x", in_array(out), "out");
        on_policy(p, [&](const auto& policy) { transform(policy, code, xv, wv ? &*wv : nullptr, o, scale); });
      },
      "code"_a, "x"_a, "w"_a.none(), "out"_a, "scale"_a, "stream"_a = 0);
  m.def(
      "reduce",
      [](const in_array& x, const out_array& out, int op, const nb::handle& init, const std::string& algorithm,
         std::uintptr_t stream) {
        if (op < 0 || op > 2) { throw std::invalid_argument("op must be 'sum', 'min' or 'max'"); }
        place p;
        p.stream = stream;
        view const xv = view_of(x, "x", p);
        view const o = view_of(out, "out", p);
        if (o.size != 1) {
          throw std::invalid_argument("out has " + std::to_string(o.size) + " elements; a reduction writes one");
        }
        auto const rop = static_cast<reduce_op>(op);
        auto const alg = algorithm_of(algorithm);
        scalar const s = init_of(init, o.type, rop);
        bool const has_init = !init.is_none() || rop != reduce_op::sum;
        on_policy(p, [&](const auto& policy) { reduce(policy, xv, o, rop, has_init ? &s : nullptr, alg); });
      },
      "x"_a, "out"_a, "op"_a, "init"_a.none(), "algorithm"_a, "stream"_a = 0);
  m.def(
      "fit",
      [](const in_array& X, const in_array& Y, const out_array& W, const py_options& options,
         const std::optional<in_array>& sample_weight, const std::optional<out_array>& intercept,
         std::uintptr_t stream) {
        place p;
        p.stream = stream;
        view const xv = view_of(X, "X", p, 2);
        view const yv = view_of(Y, "Y", p, 2);
        view const wv = view_of(W, "W", p, 2);
        std::optional<view> sv;
        std::optional<view> iv;
        if (sample_weight) { sv = view_of(*sample_weight, "sample_weight", p, 1); }
        if (intercept) { iv = view_of(*intercept, "intercept", p, 1); }
        fusekit::gd_options const o = options_for_fit(options);
        return on_policy(p, [&](const auto& policy) {
          return fit(policy, xv, yv, wv, o, sv ? &*sv : nullptr, iv ? &*iv : nullptr);
        });
      },
      "X"_a, "Y"_a, "W"_a, "options"_a, "sample_weight"_a.none(), "intercept"_a.none(), "stream"_a = 0);
  m.def(
      "predict",
      [](const in_array& X, const in_array& W, const std::optional<in_array>& intercept, const out_array& out,
         std::uintptr_t stream) {
        place p;
        p.stream = stream;
        view const xv = view_of(X, "X", p, 2);
        view const wv = view_of(W, "W", p, 2);
        std::optional<view> iv;
        if (intercept) { iv = view_of(*intercept, "intercept", p, 1); }
        view const o = view_of(out, "out", p, 2);
        on_policy(p, [&](const auto& policy) { predict(policy, xv, wv, iv ? &*iv : nullptr, o); });
      },
      "X"_a, "W"_a, "intercept"_a.none(), "out"_a, "stream"_a = 0);
  // The sums per segment and per row: on the CPU so far (segmented_api.hpp).
  m.def(
      "segmented_sum",
      [](const in_array& values, const in_array& offsets, const out_array& out) {
        place p;
        view const xv = view_of(values, "values", p, 1);
        view const ov = view_of(offsets, "offsets", p, 1);
        view const o = view_of(out, "out", p, 1);
        on_cpu_only(p);
        nb::gil_scoped_release unlocked;
        segmented_sum_cpu(xv, ov, o);
      },
      "values"_a, "offsets"_a, "out"_a);
  m.def(
      "row_sums",
      [](const in_array& X, const out_array& out) {
        place p;
        view const xv = view_of(X, "x", p, 2);
        view const o = view_of(out, "out", p, 1);
        on_cpu_only(p);
        nb::gil_scoped_release unlocked;
        row_sums_cpu(xv, o);
      },
      "x"_a, "out"_a);
}

/// Seconds per C++ call, timed in C++ over `repeats` calls on the CPU: the
/// baseline of the package's call overhead (python/benchmarks/targets.py).
double cpp_call_seconds(const std::string& what, const in_array& a, const in_array& b, const out_array& out,
                        std::int64_t repeats) {
  place p;
  view const av = view_of(a, "a", p);
  view const bv = view_of(b, "b", p);
  view const o = view_of(out, "out", p);
  if (p.cuda || repeats < 1) { throw std::invalid_argument("cpp_call_seconds times CPU calls, repeats >= 1"); }
  nb::gil_scoped_release unlocked;
  fusekit::cpu const cpu;
  auto const start = std::chrono::steady_clock::now();
  for (std::int64_t r = 0; r < repeats; ++r) {
    if (what == "hidden_layer") {
      hidden_layer(cpu, av, bv, o, 255.0, true);
    } else if (what == "sum") {
      reduce(cpu, av, o, reduce_op::sum, nullptr, fusekit::reduce_algorithm::deterministic);
    } else if (what == "predict") {
      predict(cpu, av, bv, nullptr, o);
    } else {
      throw std::invalid_argument("cpp_call_seconds times 'hidden_layer', 'sum' or 'predict'");
    }
  }
  std::chrono::duration<double> const elapsed = std::chrono::steady_clock::now() - start;
  return elapsed.count() / static_cast<double>(repeats);
}

}  // namespace
}  // namespace fusekit_python

NB_MODULE(FUSEKIT_PYTHON_MODULE, m) {
  using namespace fusekit_python;
  m.doc() = "fusekit's compiled core; use the fusekit package (fusekit/__init__.py)";
  nb::register_exception_translator([](const std::exception_ptr& e, void*) {
    try {
      std::rethrow_exception(e);
    } catch (const type_error& t) { PyErr_SetString(PyExc_TypeError, t.what()); }
  });
  bind_enums(m);
  bind_reports(m);
  bind_options(m);
  bind_calls(m);
  m.attr("has_cuda") = FUSEKIT_PYTHON_CUDA != 0;
  m.def(
      "cuda_unavailable", [] { return cuda_unavailable(); },
      "Why this module has no GPU backend ('' where it has one)");
  m.def(
      "set_cuda_unavailable", [](const std::string& why) { cuda_unavailable() = why; }, "why"_a,
      "Says why the GPU module did not load, for the messages of CUDA arrays");
  m.attr("has_half_types") = has_half_types;
  m.def("cpp_call_seconds", &cpp_call_seconds, "what"_a, "a"_a, "b"_a, "out"_a, "repeats"_a,
        "Seconds per call of the C++ function alone (hidden_layer(a, b, out), sum(a) into out, "
        "predict(a, b, out)), for the benchmarks of the package's overhead");
  m.def(
      "cuda_device_count", [] { return fusekit::cuda_device_count(); },
      "CUDA devices this process can use (0 without a driver or a GPU)");
  m.def(
      "set_default_threads", [](int n) { fusekit::set_default_threads(n); }, "n"_a,
      "The CPU backend's thread count for the process (0: the default); fusekit.set_num_threads checks it");
  m.def(
      "default_threads_setting", [] { return fusekit::detail::cpu_default_threads_setting().load(); },
      "What set_default_threads last set (0: none)");
  m.def(
      "default_threads", [] { return fusekit::default_threads(); }, "The CPU backend's thread count now");
}
