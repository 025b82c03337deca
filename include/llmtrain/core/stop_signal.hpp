// The "stop gracefully" flag. Slurm (and users) send SIGTERM or SIGUSR1 before pre-emption; the handler
// only sets a flag, and the training loop checks it between steps to checkpoint and exit cleanly.
#pragma once

namespace llmtrain {

// Installs handlers for SIGTERM and SIGUSR1 that set the stop flag. Safe to call more than once.
void install_stop_signal_handlers();

// True once a stop signal arrived (or request_stop() was called).
bool stop_requested();

// Number of the last stop signal received, 0 if none (or if stopped by request_stop()).
int stop_signal_number();

// Sets the flag without a signal (e.g. when another rank received one); keeps a received signal's number.
void request_stop();
void clear_stop_request();

}  // namespace llmtrain
