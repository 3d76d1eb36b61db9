/*
 * The PGM router assist commands (configuration, show, clear, debug capture).
 */
#ifndef PGMROUTER_CLI_PGM_VTY_H
#define PGMROUTER_CLI_PGM_VTY_H

void pgm_vty_init(void);

#endif /* PGMROUTER_CLI_PGM_VTY_H */
