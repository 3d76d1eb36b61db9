/*
 * The PGM MIB (router/snmp/PGM-MIB.txt, draft-petrova-pgmmib-01) served over AgentX: the
 * daemon is a subagent of the system's snmpd. Its network-element branch (pgmNetworkElement,
 * experimental 112) is read-only and built from the same data the JSON shows read: the running
 * configuration and the control plane's interface and session views.
 *
 * Configuration: `snmp-server agentx [port N]` (off by default) in the settings table of its
 * own module. Without a port the master is snmpd's default unix socket; with one, TCP on
 * 127.0.0.1. The subagent lives in the daemon's event loop: its sockets are loop descriptors
 * and net-snmp's alarms one loop timer, so the packet path never waits for snmpd. A master
 * that goes away (its socket closes) is looked for again every 5 seconds.
 */
#ifndef PGMROUTER_SNMP_AGENTX_H
#define PGMROUTER_SNMP_AGENTX_H

#include <stdbool.h>
#include <stdint.h>

#include "cli/settings.h"

struct ev_loop;

/* The module's value struct (global only). */
struct snmp_settings {
	bool agentx;	     /* snmp-server agentx */
	uint32_t agentx_port; /* 0: the master's unix socket */
};

extern struct cfg_module snmp_module;

/* Installs the module and its commands. `loop` NULL (configuration check, replay): the
   settings are parsed and written but no subagent runs. */
void snmp_vty_init(struct ev_loop *loop);
/* Stops the subagent (before the loop is freed). */
void snmp_agentx_stop(void);

/* The master's address for a port (0: the default unix socket), as net-snmp takes it. */
const char *snmp_agentx_address(uint32_t port, char *buf, size_t len);

#endif /* PGMROUTER_SNMP_AGENTX_H */
