// dynamix-torch: dynamix with the commands and the policy kind that need LibTorch (train,
// export, band, serve, replay; ppo:FILE). dynamix runs it in its own place for them.
#include <string>
#include <vector>

#include "apps/band.h"
#include "apps/commands.h"
#include "apps/export.h"
#include "apps/replay.h"
#include "apps/serve.h"
#include "apps/train.h"
#include "dynamix_config.h"
#include "policies/export/torch_threads.h"

int main(int argc, char** argv) {
  // LibTorch's threads are the program's to set: one, fastest for these small networks.
  dynamix::set_torch_threads(1);
  dynamix::TorchCommands torch{.train = dynamix::run_train,
                               .export_checkpoint = dynamix::run_export,
                               .band = dynamix::run_band};
#ifdef DYNAMIX_ADAPTER
  torch.serve = dynamix::run_serve;
  torch.replay = dynamix::run_replay;
#endif
  return dynamix::run_dynamix(dynamix::command_table(torch), {argv + 1, argv + argc}, {});
}
