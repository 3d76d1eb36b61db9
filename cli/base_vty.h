/*
 * The engine's own commands (cli/base_vty.c): modes, hostname, interface, description,
 * terminal, history, show running-config/startup-config, copy and write.
 */
#ifndef PGMROUTER_CLI_BASE_VTY_H
#define PGMROUTER_CLI_BASE_VTY_H

/* `group`: the read-only access group, named when `enable` is refused. */
void base_vty_init(const char *group);

#endif /* PGMROUTER_CLI_BASE_VTY_H */
