#include "tools/weft_train/plot.h"

#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace weft_train {
namespace {

// gnuplot's single-quoted strings take every character but the quote itself.
std::string quoted(const std::string& s) {
  std::string out = "'";
  for (char c : s)
    out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

}  // namespace

void plotLossCurves(const std::vector<LossCurve>& curves, double unigramEntropy,
                    const std::string& path) {
  char dirTemplate[] = "/tmp/weft-train-plot-XXXXXX";
  if (mkdtemp(dirTemplate) == nullptr) throw std::runtime_error("cannot make a temporary folder");
  const std::filesystem::path dir(dirTemplate);
  const std::string data = (dir / "loss.dat").string(), script = (dir / "loss.gp").string();
  {
    std::ofstream d(data);
    for (const LossCurve& c : curves) {
      for (const auto& [step, loss] : c.loss)
        d << step << ' ' << loss << '\n';
      d << "\n\n";  // the next data block (gnuplot's index)
    }
    std::ofstream g(script);
    g << "set terminal pngcairo size 900,560\n"
      << "set output " << quoted(path) << "\n"
      << "set xlabel 'step'\nset ylabel 'loss (nats)'\nset key top right\nset grid\n"
      << "plot ";
    for (size_t i = 0; i < curves.size(); ++i) {
      g << quoted(data) << " index " << i << " with lines lw 2 title " << quoted(curves[i].label)
        << ", ";
    }
    g << unigramEntropy << " with lines dt 2 lc 'gray' title 'unigram entropy'\n";
  }
  const std::string command = "gnuplot " + script + " 2>&1";
  FILE* p = popen(command.c_str(), "r");
  std::string output;
  if (p != nullptr) {
    char buf[256];
    while (fgets(buf, sizeof(buf), p) != nullptr)
      output += buf;
  }
  const int status = p == nullptr ? -1 : pclose(p);
  std::filesystem::remove_all(dir);
  if (status != 0) {
    throw std::runtime_error("--plot: gnuplot failed" +
                             std::string(WIFEXITED(status) && WEXITSTATUS(status) == 127
                                             ? " (is it installed? Debian: gnuplot-nox)"
                                             : ": " + output));
  }
}

}  // namespace weft_train
