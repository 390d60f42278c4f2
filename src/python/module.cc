// lepus._lepus: the C++ core of the Python package (src/python/lepus). A Session (cli/session.h) per model:
// the CLI's options, learners, parsers and model files. Library errors become lepus.Error subclasses carrying
// the CLI's one-line message; the CSR entry points learn or predict a whole matrix with the GIL released.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cli/session.h"
#include "lepus/errors.h"

namespace py = pybind11;
using lepus::cli::CsrRows;
using lepus::cli::Session;
using lepus::cli::SessionResult;

namespace {

// A Session and the lock that keeps two Python threads from using it at once (the CSR calls run without the
// GIL). The lock is taken after the GIL is released and given back before it is taken again, so a thread
// waiting for it while holding the GIL never waits on one that needs the GIL.
struct Locked {
  explicit Locked(const std::vector<std::string>& args) : session(args) {}
  Session session;
  std::mutex mutex;
};

using Index = py::array_t<int64_t, py::array::c_style | py::array::forcecast>;
using Values = py::array_t<float, py::array::c_style | py::array::forcecast>;

py::object result_object(const SessionResult& r) {
  if (r.empty) return py::none();
  if (!r.scores.empty()) return py::int_(r.klass);
  return py::float_(r.shown);
}

// Learns (or predicts) a CSR matrix; returns (shown, value[, classes, scores]) as numpy arrays.
py::tuple csr(Locked& l, bool learn, const Index& indptr, const Index& indices, const Values& data,
              const py::object& labels_obj, const py::object& weights_obj) {
  if (indptr.ndim() != 1 || indices.ndim() != 1 || data.ndim() != 1)
    throw lepus::ConfigError("indptr, indices and data must be one-dimensional");
  if (indptr.shape(0) < 1) throw lepus::ConfigError("indptr must hold at least one entry");
  const size_t rows = static_cast<size_t>(indptr.shape(0) - 1);
  if (indices.shape(0) != data.shape(0)) throw lepus::ConfigError("indices and data differ in length");
  const int64_t* ip = indptr.data();
  if (ip[0] != 0 || ip[rows] > indices.shape(0))
    throw lepus::ConfigError("indptr does not describe indices and data");
  for (size_t i = 0; i < rows; ++i)
    if (ip[i + 1] < ip[i]) throw lepus::ConfigError("indptr decreases at row " + std::to_string(i + 1));
  Values labels, weights;
  CsrRows r;
  r.indptr = ip;
  r.indices = indices.data();
  r.data = data.data();
  r.rows = rows;
  if (!labels_obj.is_none()) {
    labels = labels_obj.cast<Values>();
    if (labels.ndim() != 1 || static_cast<size_t>(labels.shape(0)) != rows)
      throw lepus::ConfigError("labels must hold one entry per row");
    r.labels = labels.data();
  }
  if (!weights_obj.is_none()) {
    weights = weights_obj.cast<Values>();
    if (weights.ndim() != 1 || static_cast<size_t>(weights.shape(0)) != rows)
      throw lepus::ConfigError("weights must hold one entry per row");
    r.weights = weights.data();
  }
  const uint32_t k = l.session.classes();
  Values shown(static_cast<py::ssize_t>(rows)), value(static_cast<py::ssize_t>(rows));
  py::array_t<uint32_t> klass(static_cast<py::ssize_t>(k ? rows : 0));
  Values scores(
      std::vector<py::ssize_t>{static_cast<py::ssize_t>(k ? rows : 0), static_cast<py::ssize_t>(k)});
  float* sp = shown.mutable_data();
  float* vp = value.mutable_data();
  uint32_t* kp = k ? klass.mutable_data() : nullptr;
  float* cp = k ? scores.mutable_data() : nullptr;
  {
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(l.mutex);
    if (learn) {
      l.session.learn_csr(r, sp, vp, kp, cp);
    } else {
      l.session.predict_csr(r, sp, vp, kp, cp);
    }
  }
  if (k) return py::make_tuple(shown, value, klass, scores);
  return py::make_tuple(shown, value);
}

}  // namespace

PYBIND11_MODULE(_lepus, m) {
  m.doc() = "lepus's C++ core: one Session per model (the CLI's options, learners, parsers and model files)";
  m.attr("__version__") = LEPUS_VERSION;
  static py::exception<lepus::Error> error(m, "Error", PyExc_Exception);
  static py::exception<lepus::ConfigError> config_error(m, "ConfigError", error.ptr());
  static py::exception<lepus::ModelFormatError> model_error(m, "ModelFormatError", error.ptr());
  static py::exception<lepus::ParseError> parse_error(m, "ParseError", error.ptr());
  static py::exception<lepus::IoError> io_error(m, "IoError", error.ptr());
  // The most derived first: one translator, tried before pybind11's own (std::exception -> RuntimeError).
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const lepus::ConfigError& e) {
      config_error(e.what());
    } catch (const lepus::ModelFormatError& e) {
      model_error(e.what());
    } catch (const lepus::ParseError& e) {
      parse_error(e.what());
    } catch (const lepus::IoError& e) {
      io_error(e.what());
    } catch (const lepus::Error& e) {
      error(e.what());
    }
  });

  py::class_<Locked>(m, "Session")
      .def(py::init<const std::vector<std::string>&>(), py::arg("args"))
      .def(
          "learn",
          [](Locked& l, std::string_view line) {
            std::lock_guard<std::mutex> lock(l.mutex);
            return result_object(l.session.learn(line));
          },
          py::arg("line"))
      .def(
          "predict",
          [](Locked& l, std::string_view line) {
            std::lock_guard<std::mutex> lock(l.mutex);
            return result_object(l.session.predict(line));
          },
          py::arg("line"))
      .def(
          "learn_csr",
          [](Locked& l, const Index& indptr, const Index& indices, const Values& data,
             const py::object& labels,
             const py::object& weights) { return csr(l, true, indptr, indices, data, labels, weights); },
          py::arg("indptr"), py::arg("indices"), py::arg("data"), py::arg("labels"),
          py::arg("weights") = py::none())
      .def(
          "predict_csr",
          [](Locked& l, const Index& indptr, const Index& indices, const Values& data) {
            return csr(l, false, indptr, indices, data, py::none(), py::none());
          },
          py::arg("indptr"), py::arg("indices"), py::arg("data"))
      .def(
          "save",
          [](Locked& l, const std::string& path) {
            py::gil_scoped_release release;
            std::lock_guard<std::mutex> lock(l.mutex);
            l.session.save(path);
          },
          py::arg("path"))
      .def_property_readonly("test_only", [](const Locked& l) { return l.session.test_only(); })
      .def_property_readonly("classes", [](const Locked& l) { return l.session.classes(); })
      .def_property_readonly("learner", [](const Locked& l) { return l.session.learner_name(); })
      .def_property_readonly("loss", [](const Locked& l) { return l.session.loss_name(); })
      .def_property_readonly("warnings", [](const Locked& l) { return l.session.warnings(); })
      .def_property_readonly("examples", [](Locked& l) {
        std::lock_guard<std::mutex> lock(l.mutex);
        return l.session.examples();
      });
}
