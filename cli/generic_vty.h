/*
 * The generic commands: modes, hostname, interface, description, terminal, history, show
 * version/running-config/startup-config/debugging, copy/write, debug/undebug.
 */
#ifndef PGMROUTER_CLI_GENERIC_VTY_H
#define PGMROUTER_CLI_GENERIC_VTY_H

struct cmd_session;

void generic_vty_init(void);
void generic_vty_free(void);

/* Debugging kept by another module (the PGM packet capture): `undebug all` and `no debug all`
   call all_off, `show debugging` calls show to list it. One module at most. */
void generic_vty_debug_register(void (*all_off)(void), void (*show)(struct cmd_session *s));

#endif /* PGMROUTER_CLI_GENERIC_VTY_H */
