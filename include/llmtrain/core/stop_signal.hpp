// The "stop gracefully" flag. Slurm (and users) send SIGTERM or SIGUSR1 before pre-emption, a user at a
// terminal SIGINT (Ctrl-C); the handler only sets a flag, and the training loop checks it between steps to
// checkpoint and exit cleanly (status 0).
#pragma once

#include <string>

namespace llmtrain {

// Installs handlers for SIGTERM, SIGUSR1 and SIGINT that set the stop flag; SIGINT's goes back to the default
// action once it ran, so a second Ctrl-C ends the process at once; an ignored SIGINT (a script's background
// job) stays ignored. Safe to call more than once.
void install_stop_signal_handlers();

// True once a stop signal arrived (or request_stop() was called).
bool stop_requested();

// Number of the last stop signal received, 0 if none (or if stopped by request_stop()).
int stop_signal_number();

// "SIGINT", "SIGTERM", "SIGUSR1" (other numbers: "signal N"), for messages.
std::string signal_name(int signum);

// Sets the flag without a signal (e.g. when another rank received one); keeps a received signal's number.
void request_stop();
void clear_stop_request();

}  // namespace llmtrain
