/*
 * The PGM router assist commands: the settings table of `ip pgm router ...` (global and per
 * interface) with the glue that hands the configuration to router assist, `show ip pgm router
 * ...` (router/vty/pgm_show.c), `clear ip pgm router ...` and the debug capture.
 */
#ifndef PGMROUTER_PGM_VTY_H
#define PGMROUTER_PGM_VTY_H

#include <stddef.h>

#include "cli/settings.h"
#include "router/assist/assist.h"

/* The settings module (`ip pgm router`): assist_settings globally, assist_if_settings per
   interface. */
extern struct cfg_module pgm_module;

/* Marks of the module's rows (setting.flags). */
#define PGM_SETTING_QUEUE 0x1 /* the netfilter queue and its rules: a restart of both */
#define PGM_SETTING_BRIEF 0x2 /* in `show ip pgm router interface` without `verbose` */

/* Installs the module and the commands. */
void pgm_vty_init(void);
/* Router assist the commands act on (NULL: none, "not running"), configured at once with the
   running configuration. 0, or -1 with one sentence in err. */
int pgm_vty_attach(struct assist *a, char *err, size_t errlen);
struct assist *pgm_vty_assist(void);

/* A configuration as router assist takes it: global values and each interface's effective
   ones. 0, or -1 without memory. */
int pgm_conf_from_cfg(const struct cfg *c, struct assist_conf *out);

/* The debug capture, for `show debugging` and `undebug all`. */
const char *pgm_vty_capture_path(void);
void pgm_vty_capture_stop(void);

/* show.c: installs the show commands. */
void pgm_show_init(void);

#endif /* PGMROUTER_PGM_VTY_H */
