#include "tools/weft_train/options.h"

#include <CLI/CLI.hpp>
#include <algorithm>

#include "tools/version.h"

namespace weft_train {

bool parseOptions(int argc, char** argv, Options* out, int* exitCode) {
  Options o;
  CLI::App app(
      "Trains a character-level language model on a text with Weft's training layer: plain data "
      "parallelism or ZeRO stage 1-3, over the ranks weftCommInitFromEnv finds (run it under "
      "weft-run, mpirun, srun or torchrun). Rank 0 prints one line per step.",
      "weft-train");
  app.set_version_flag("--version", weft::tools::versionText("weft-train"));
  app.add_option("--text", o.text, "Text file to learn from")->capture_default_str();
  app.add_option("--zero", o.zeros,
                 "0: data parallelism (DDP-like), 1-3: ZeRO stage; several (0,3) run one after "
                 "the other")
      ->delimiter(',')
      ->check(CLI::Range(0, 3))
      ->capture_default_str();
  app.add_option("--steps", o.steps, "Optimizer steps")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--batch", o.batch, "Global batch (examples per step, split over the ranks)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--seed", o.seed, "Seed of the initial parameters and the batches")
      ->capture_default_str();
  app.add_option("--bucket-bytes", o.bucketBytes, "Gradient bucket size cap in bytes")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--lr", o.lr, "Adam's learning rate")->capture_default_str();
  app.add_option("--precision", o.precisions,
                 "Parameters and gradients: fp32, or bf16 or fp16 with fp32 master weights (fp16 "
                 "with dynamic loss scaling); several (fp32,bf16) run one after the other")
      ->delimiter(',')
      ->check(CLI::IsMember({"fp32", "bf16", "fp16"}))
      ->capture_default_str();
  app.add_option("--plot", o.plot, "Rank 0 draws the loss curves of the modes run into this PNG");
  app.add_option("--loss-scale", o.lossScale, "fp16: the initial (dynamic) loss scale")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--clip", o.clip, "Clip the gradients to this global L2 norm; 0 does not clip")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--context", o.shape.context, "Characters the model sees per prediction")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--embed", o.shape.embed, "Features per character")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--hidden", o.shape.hidden, "Width of each block's MLP")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--blocks", o.shape.blocks, "Residual MLP blocks")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--dump", o.dump, "Rank 0 writes the final parameters here (float32, in order)");
  app.add_option("--overlap", o.overlap,
                 "After training, time this many steps, and their compute and their "
                 "communication apart (medians)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--param-server", o.paramServers,
                 "Parameter servers: ranks 0 to K-1 keep the optimizer state of their share of "
                 "the parameters, get the reduced gradients and broadcast the update (0: none)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_flag("--offload", o.offload,
               "ZeRO: master weights and Adam's moments in a host pool, the update on threads "
               "overlapping the next step's gathers");
  app.add_flag("--quiet", o.quiet, "Print only the last step's line");
  try {
    app.parse(argc, argv);
    if (!o.dump.empty() && o.zeros.size() * o.precisions.size() > 1) {
      throw CLI::ValidationError("--dump", "writes the parameters of one mode, not of several");
    }
    const bool allDataParallel =
        std::all_of(o.zeros.begin(), o.zeros.end(), [](int z) { return z == 0; });
    const bool allFp32 = std::all_of(o.precisions.begin(), o.precisions.end(),
                                     [](const std::string& p) { return p == "fp32"; });
    if (o.paramServers > 0 && (!allDataParallel || o.offload || !allFp32 || o.clip > 0)) {
      throw CLI::ValidationError("--param-server",
                                 "runs float32 data parallelism: not with --zero, --offload, "
                                 "--precision or --clip");
    }
    if (o.offload && std::find(o.zeros.begin(), o.zeros.end(), 0) != o.zeros.end()) {
      throw CLI::ValidationError("--offload", "needs --zero 1, 2 or 3");
    }
  } catch (const CLI::ParseError& e) {
    *exitCode = app.exit(e);
    return false;
  }
  *out = o;
  return true;
}

}  // namespace weft_train
