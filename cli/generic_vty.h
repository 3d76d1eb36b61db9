/*
 * The generic commands: modes, hostname, interface, description, terminal, history, show
 * version/running-config/startup-config/debugging, copy/write, debug/undebug.
 */
#ifndef PGMROUTER_CLI_GENERIC_VTY_H
#define PGMROUTER_CLI_GENERIC_VTY_H

void generic_vty_init(void);
void generic_vty_free(void);

#endif /* PGMROUTER_CLI_GENERIC_VTY_H */
