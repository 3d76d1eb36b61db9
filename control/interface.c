/*
 * Interfaces known to the control plane. An interface with router assist owns one of 64 slots;
 * repair states keep their interface sets as masks of slots.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control/cp_internal.h"

#define IFMAP_SIZE (2 * CP_MAX_KNOWN_INTERFACES)

static unsigned ifmap_home(int ifindex)
{
	return ((uint32_t)ifindex * 2654435761u) & (IFMAP_SIZE - 1);
}

struct cp_iface *cp_iface_find(const struct cp *cp, int ifindex)
{
	if (ifindex <= 0)
		return NULL;
	for (unsigned i = ifmap_home(ifindex);; i = (i + 1) & (IFMAP_SIZE - 1)) {
		if (cp->ifmap[i].ifindex == ifindex)
			return cp->ifmap[i].ifp;
		if (cp->ifmap[i].ifindex == 0)
			return NULL;
	}
}

static void ifmap_insert(struct cp *cp, struct cp_iface *ifp)
{
	unsigned i = ifmap_home(ifp->ifindex);

	while (cp->ifmap[i].ifindex != 0)
		i = (i + 1) & (IFMAP_SIZE - 1);
	cp->ifmap[i].ifindex = ifp->ifindex;
	cp->ifmap[i].ifp = ifp;
}

/* Linear-probing deletion without tombstones: shift later entries of the run back. */
static void ifmap_remove(struct cp *cp, int ifindex)
{
	unsigned i = ifmap_home(ifindex), j;

	while (cp->ifmap[i].ifindex != ifindex) {
		if (cp->ifmap[i].ifindex == 0)
			return;
		i = (i + 1) & (IFMAP_SIZE - 1);
	}
	cp->ifmap[i].ifindex = 0;
	cp->ifmap[i].ifp = NULL;
	for (j = (i + 1) & (IFMAP_SIZE - 1); cp->ifmap[j].ifindex != 0;
		j = (j + 1) & (IFMAP_SIZE - 1)) {
		unsigned home = ifmap_home(cp->ifmap[j].ifindex);

		/* move j back to i unless its home lies cyclically in (i, j] */
		if (i <= j ? (home > i && home <= j) : (home > i || home <= j))
			continue;
		cp->ifmap[i] = cp->ifmap[j];
		cp->ifmap[j].ifindex = 0;
		cp->ifmap[j].ifp = NULL;
		i = j;
	}
}

int cp_if_add(struct cp *cp, int ifindex, const char *name)
{
	struct cp_iface *ifp = cp_iface_find(cp, ifindex);

	if (ifindex <= 0)
		return -1;
	if (ifp == NULL) {
		if (cp->nifs == CP_MAX_KNOWN_INTERFACES)
			return -1;
		ifp = calloc(1, sizeof(*ifp));
		if (ifp == NULL)
			return -1;
		ifp->ifindex = ifindex;
		ifp->slot = -1;
		cp->ifs[cp->nifs++] = ifp;
		ifmap_insert(cp, ifp);
	}
	snprintf(ifp->name, sizeof(ifp->name), "%s", name != NULL ? name : "");
	return 0;
}

static void release_slot(struct cp *cp, struct cp_iface *ifp)
{
	if (ifp->slot < 0)
		return;
	cp_repairs_drop_slot(cp, ifp->slot);
	cp->slot_if[ifp->slot] = NULL;
	ifp->slot = -1;
}

void cp_if_remove(struct cp *cp, int ifindex)
{
	struct cp_iface *ifp = cp_iface_find(cp, ifindex);

	if (ifp == NULL)
		return;
	release_slot(cp, ifp);
	cp_sessions_upstream_removed(cp, ifindex);
	ifmap_remove(cp, ifindex);
	for (unsigned i = 0; i < cp->nifs; i++) {
		if (cp->ifs[i] == ifp) {
			cp->ifs[i] = cp->ifs[--cp->nifs];
			cp->ifs[cp->nifs] = NULL;
			break;
		}
	}
	free(ifp);
}

void cp_if_set_addr(struct cp *cp, int ifindex, const struct pgm_nla *addr)
{
	struct cp_iface *ifp = cp_iface_find(cp, ifindex);

	if (ifp == NULL)
		return;
	if (addr != NULL && addr->afi == PGM_AFI_IP6)
		ifp->addr6 = *addr;
	else if (addr != NULL)
		ifp->addr = *addr;
	else
		memset(&ifp->addr, 0, sizeof(ifp->addr));
}

void cp_if_set_addr6(
	struct cp *cp, int ifindex, const struct pgm_nla *global, const struct pgm_nla *link_local)
{
	struct cp_iface *ifp = cp_iface_find(cp, ifindex);

	if (ifp == NULL)
		return;
	memset(&ifp->addr6, 0, sizeof(ifp->addr6));
	memset(&ifp->ll6, 0, sizeof(ifp->ll6));
	if (global != NULL && global->afi == PGM_AFI_IP6)
		ifp->addr6 = *global;
	if (link_local != NULL && link_local->afi == PGM_AFI_IP6)
		ifp->ll6 = *link_local;
}

static bool nla_link_local(const struct pgm_nla *a)
{
	return a != NULL && a->afi == PGM_AFI_IP6 && a->addr[0] == 0xfe &&
	       (a->addr[1] & 0xc0) == 0x80;
}

const struct pgm_nla *cp_if_addr_for(
	const struct cp_iface *ifp, uint16_t afi, const struct pgm_nla *peer)
{
	static const struct pgm_nla none;

	if (afi == PGM_AFI_IP)
		return &ifp->addr;
	if (afi != PGM_AFI_IP6)
		return &none;
	if (ifp->ll6.afi != 0 && (ifp->addr6.afi == 0 || nla_link_local(peer)))
		return &ifp->ll6;
	return &ifp->addr6;
}

int cp_if_set_assist(struct cp *cp, int ifindex, bool enabled)
{
	struct cp_iface *ifp = cp_iface_find(cp, ifindex);

	if (ifp == NULL)
		return -1;
	if (!enabled) {
		release_slot(cp, ifp);
		ifp->assist = false;
		return 0;
	}
	if (ifp->assist)
		return 0;
	for (int slot = 0; slot < CP_MAX_INTERFACES; slot++) {
		if (cp->slot_if[slot] == NULL) {
			cp->slot_if[slot] = ifp;
			ifp->slot = slot;
			ifp->assist = true;
			return 0;
		}
	}
	return -1;
}

void cp_if_set_config(struct cp *cp, int ifindex, const struct cp_if_config *cfg)
{
	struct cp_iface *ifp = cp_iface_find(cp, ifindex);

	if (ifp == NULL)
		return;
	ifp->has_cfg = cfg != NULL;
	if (cfg != NULL)
		ifp->cfg = *cfg;
}

int cp_if_slot_ifindex(const struct cp *cp, unsigned slot)
{
	return slot < CP_MAX_INTERFACES && cp->slot_if[slot] != NULL ? cp->slot_if[slot]->ifindex
								     : 0;
}

bool cp_is_local_address(const struct cp *cp, const struct pgm_nla *addr)
{
	for (unsigned i = 0; i < cp->nifs; i++) {
		const struct cp_iface *ifp = cp->ifs[i];

		if ((ifp->addr.afi != 0 && pgm_nla_equal(&ifp->addr, addr)) ||
			(ifp->addr6.afi != 0 && pgm_nla_equal(&ifp->addr6, addr)) ||
			(ifp->ll6.afi != 0 && pgm_nla_equal(&ifp->ll6, addr)))
			return true;
	}
	return false;
}

bool cp_nak_dest_usable(const struct cp *cp, const struct pgm_nla *addr)
{
	static const uint8_t any[16], loopback6[16] = {[15] = 1};
	const uint8_t *a = addr->addr;

	if (addr->afi == PGM_AFI_IP) {
		/* 0/8 "this network", 127/8 loopback, 224/4 multicast, 240/4 reserved with the
		   limited broadcast 255.255.255.255 */
		if (a[0] == 0 || a[0] == 127 || a[0] >= 224)
			return false;
	} else if (addr->afi == PGM_AFI_IP6) {
		if (a[0] == 0xff || memcmp(a, any, 16) == 0 || memcmp(a, loopback6, 16) == 0)
			return false;
	} else {
		return false;
	}
	return !cp_is_local_address(cp, addr);
}

void cp_ifaces_free(struct cp *cp)
{
	for (unsigned i = 0; i < cp->nifs; i++)
		free(cp->ifs[i]);
	cp->nifs = 0;
	memset(cp->ifmap, 0, sizeof(cp->ifmap));
	memset(cp->slot_if, 0, sizeof(cp->slot_if));
}
