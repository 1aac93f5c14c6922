// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The trainer's texts for logs (train_types.hpp): `fit_progress::add` and
/// `text`, one line per progress report, and `fit_report::summary`, which
/// says how the outputs ended and, when not all converged, what to try.

#include <fusekit/train_types.hpp>

#include <cstdint>
#include <cstdio>
#include <string>

namespace fusekit {

inline void fit_progress::add(const output_report& output, bool still_running) {
  iteration = output.iterations > iteration ? output.iterations : iteration;
  if (still_running) {
    ++running;
    worst_grad_norm2 = output.grad_norm2 > worst_grad_norm2 ? output.grad_norm2 : worst_grad_norm2;
  } else {
    ++ended[static_cast<int>(output.status)];
  }
}

inline std::string fit_progress::text() const {
  char worst[32];
  std::snprintf(worst, sizeof worst, "%.2e", worst_grad_norm2);
  std::string line = std::to_string(iteration) + " iterations: " + std::to_string(running) + " running";
  if (running > 0) { line += std::string(" (worst gradT.grad ") + worst + ")"; }
  for (fit_status s : {fit_status::converged, fit_status::max_iterations, fit_status::stalled, fit_status::diverged}) {
    if (ended[static_cast<int>(s)] > 0) {
      line += ", " + std::to_string(ended[static_cast<int>(s)]) + " " + to_string(s);
    }
  }
  return line;
}

inline std::string fit_report::summary() const {
  std::int64_t count[4] = {0, 0, 0, 0};
  for (const auto& o : outputs) { ++count[static_cast<int>(o.status)]; }
  std::string text;
  for (fit_status s : {fit_status::converged, fit_status::max_iterations, fit_status::stalled, fit_status::diverged}) {
    if (count[static_cast<int>(s)] == 0) { continue; }
    text += (text.empty() ? "" : ", ") + std::to_string(count[static_cast<int>(s)]) + " of " +
            std::to_string(outputs.size()) + " outputs " + to_string(s);
  }
  if (outputs.empty()) { text = "no outputs"; }
  text +=
      std::string(" (") + to_string(method) +
      (preconditioner != gd_preconditioner::none ? std::string(" with ") + to_string(preconditioner) : std::string()) +
      ", at most " + std::to_string(most_iterations()) + " iterations).";
  bool const slow =
      count[static_cast<int>(fit_status::max_iterations)] + count[static_cast<int>(fit_status::stalled)] > 0;
  bool const descent = method != gd_method::conjugate_gradient;
  if (count[static_cast<int>(fit_status::diverged)] > 0 && descent) {
    text +=
        " The iterates grew without bound: leave learning_rate unset (automatic, 1/λmax(XᵀX)) or use "
        "fusekit::gd_options::recommended() (conjugate gradients need no learning rate).";
  } else if (count[static_cast<int>(fit_status::diverged)] > 0) {
    text += " The iterates became non-finite: check X and Y for values near the type's range, or train in double.";
  }
  if (slow && descent) {
    text +=
        " Plain and Nesterov descent need about κ(XᵀX) iterations on features of different scales: try "
        "fusekit::gd_options::recommended() (conjugate gradients with the Jacobi preconditioner), which "
        "reaches the least-squares optimum in at most L iterations in exact arithmetic.";
  } else if (slow && preconditioner == gd_preconditioner::none) {
    text += " Try preconditioner = jacobi (fusekit::gd_options::recommended()): it evens out the features' scales.";
  } else if (count[static_cast<int>(fit_status::stalled)] > 0) {
    text +=
        " A stalled output is at the rounding floor of its type: W is as accurate as the data's conditioning "
        "allows there; train in double, or ask for a looser relative_tolerance.";
  } else if (slow) {
    text += " The data are ill-conditioned: raise max_iterations, or train in double (docs/trainer.md).";
  }
  return text;
}

}  // namespace fusekit
