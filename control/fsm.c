/*
 * The repair state machine as data (RFC 3208 7.2-7.8, 9.5.3.2, 11.6): one table of {phases,
 * event, action, next phase} for the repair state of a (TSI, SQN), and cp_repair_fsm(), which
 * finds the row for the state's phase and the event, runs the row's action, sets the next phase
 * and writes the row's debug line. The phases are described in repair.c.
 *
 * The callers name the events (nak.c, ncf.c, rdata.c, dlr.c, parity.c, the timers in repair.c)
 * and the actions live beside them, in the file of their RFC section. cp_nak writes its rows'
 * lines itself once the NAK's fate is known: a duplicate's line says whether the list went on.
 *
 * An event no row expects in the state's phase is warned about and counted, and the state is
 * left as it was. Events that change nothing in some phase have rows there with no action and
 * no line, so the table names every event that happens.
 */
#include <string.h>

#include "control/cp_internal.h"

/* The phases a row applies in, and the phase it goes to. */
#define P	  CP_FSM_IN(CP_FSM_PENDING)
#define O	  CP_FSM_IN(CP_FSM_OUTSTANDING)
#define F	  CP_FSM_IN(CP_FSM_FORWARDING)
#define NN	  CP_FSM_IN(CP_FSM_NNAK)
#define R	  CP_FSM_IN(CP_FSM_REPAIRED)
#define X	  CP_FSM_IN(CP_FSM_NONE)
#define TO(phase) CP_FSM_##phase

/* One row a line and its text below it: kept as written, a table. */
/* clang-format off */
const struct cp_fsm_row cp_fsm_table[] = {
	/* NAKs (7.2-7.4): forwarded unless the state eliminates them; a PENDING state always
	 * does, a FORWARDING one never: the repair went by, it is a new request (7.8). With a
	 * crossing window, forwarding and repaired state eliminate only a NAK that crossed the
	 * repair: on an interface that had its copy, from a source that had not NAKed the SQN
	 * here, within the window (nak.c) */
	{X,	CP_EV_NAK,		cp_fsm_nak_first,		TO(PENDING),
		"NAK on %s in NONE -> PENDING (forwarded)"},
	{O,	CP_EV_NAK,		cp_fsm_nak_again,		TO(PENDING),
		"NAK on %s in OUTSTANDING -> PENDING (forwarded, elimination over)"},
	{NN,	CP_EV_NAK,		cp_fsm_nak_after_nnak,		TO(PENDING),
		"NAK on %s in OUTSTANDING -> PENDING (forwarded, state was NNAK-created)"},
	{F,	CP_EV_NAK,		cp_fsm_nak_after_repair,	TO(PENDING),
		"NAK on %s in FORWARDING -> PENDING (forwarded, new request after repair)"},
	{R,	CP_EV_NAK,		cp_fsm_nak_after_repair,	TO(PENDING),
		"NAK on %s in REPAIRED -> PENDING (forwarded, new request after repair)"},
	{F,	CP_EV_NAK_CROSSED,	cp_fsm_nak_crossed,		TO(SAME),
		"NAK on %s in FORWARDING -> FORWARDING (%s: crossed the repair on its way)"},
	{R,	CP_EV_NAK_CROSSED,	cp_fsm_nak_crossed,		TO(SAME),
		"NAK on %s in REPAIRED -> REPAIRED (%s: crossed the repair on its way)"},
	{P,	CP_EV_NAK_DUPLICATE,	cp_fsm_nak_duplicate,		TO(SAME),
		"NAK on %s in PENDING -> PENDING (%s)"},
	{O,	CP_EV_NAK_DUPLICATE,	cp_fsm_nak_duplicate,		TO(SAME),
		"NAK on %s in OUTSTANDING -> OUTSTANDING (%s)"},
	/* 9.5.3.2: the off-tree DLR NAKs an SQN we redirected to it: it lacks it too */
	{P,	CP_EV_NAK_FROM_DLR,	cp_fsm_nak_dlr_fallback,	TO(PENDING),
		"NAK on %s in PENDING -> PENDING (forwarded, elimination over)"},
	{O,	CP_EV_NAK_FROM_DLR,	cp_fsm_nak_dlr_fallback,	TO(PENDING),
		"NAK on %s in OUTSTANDING -> PENDING (forwarded, elimination over)"},
	{F,	CP_EV_NAK_FROM_DLR,	cp_fsm_nak_dlr_fallback,	TO(PENDING),
		"NAK on %s in FORWARDING -> PENDING (forwarded, elimination over)"},
	{R,	CP_EV_NAK_FROM_DLR,	cp_fsm_nak_dlr_fallback,	TO(PENDING),
		"NAK on %s in REPAIRED -> PENDING (forwarded, elimination over)"},

	/* NNAKs (9.5.3.2): state only where there was none, never an interface */
	{X,	CP_EV_NNAK,		cp_fsm_nnak_first,		TO(NNAK),
		"NNAK in NONE -> OUTSTANDING (NNAK state, forwarded)"},
	{P|O|F|NN|R, CP_EV_NNAK,	cp_fsm_nnak_known,		TO(SAME),
		NULL},

	/* NCFs from upstream confirm a NAK or anticipate one (7.3, 7.5) */
	{X,	CP_EV_NCF,		cp_fsm_ncf_anticipate,		TO(OUTSTANDING),
		"NCF in NONE -> OUTSTANDING (anticipated)"},
	{P,	CP_EV_NCF,		cp_fsm_ncf_confirm,		TO(OUTSTANDING),
		"NCF in PENDING -> OUTSTANDING (confirmed)"},
	{O,	CP_EV_NCF,		cp_fsm_ncf_restart,		TO(OUTSTANDING),
		"NCF in OUTSTANDING -> OUTSTANDING (timers restarted, anticipated)"},
	{NN,	CP_EV_NCF,		cp_fsm_ncf_after_nnak,		TO(OUTSTANDING),
		"NCF in OUTSTANDING -> OUTSTANDING (timers restarted, anticipated)"},
	{F,	CP_EV_NCF,		cp_fsm_ncf_after_repair,	TO(OUTSTANDING),
		"NCF in FORWARDING -> OUTSTANDING (timers restarted, anticipated)"},
	{R,	CP_EV_NCF,		cp_fsm_ncf_after_repair,	TO(OUTSTANDING),
		"NCF in REPAIRED -> OUTSTANDING (timers restarted, anticipated)"},

	/* RDATA (7.8): its first copy starts the forwarding, the last one wanted ends it */
	{P,	CP_EV_RDATA,		cp_fsm_rdata_forward,		TO(FORWARDING),
		"RDATA in PENDING -> FORWARDING"},
	{O,	CP_EV_RDATA,		cp_fsm_rdata_forward,		TO(FORWARDING),
		"RDATA in OUTSTANDING -> FORWARDING"},
	{P,	CP_EV_RDATA_UNREQUESTED, cp_fsm_rdata_unrequested,	TO(NONE),
		"RDATA in PENDING -> deleted (no interfaces)"},
	{O|NN,	CP_EV_RDATA_UNREQUESTED, cp_fsm_rdata_unrequested,	TO(NONE),
		"RDATA in OUTSTANDING -> deleted (no interfaces)"},
	{F,	CP_EV_RDATA_REPAIRED,	cp_fsm_repair_completed,	TO(NONE),
		"RDATA in FORWARDING -> deleted (every interface repaired)"},
	/* every interface repaired, forwarding nothing more (7.8); kept for the crossing window
	 * to tell the NAKs that crossed the repair from new requests */
	{F,	CP_EV_RDATA_REPAIRED_HOLD, cp_fsm_repair_held,		TO(REPAIRED),
		"RDATA in FORWARDING -> REPAIRED (every interface repaired, crossing window)"},

	/* the off-tree DLR a NAK was redirected to (9.5.3.2): its unicast NCF confirms what we
	 * asked it for, its unicast RDATA is re-sourced downstream */
	{P,	CP_EV_DLR_NCF,		cp_fsm_dlr_confirm,		TO(OUTSTANDING),
		"unicast NCF from the off-tree DLR in PENDING -> OUTSTANDING"},
	{O|F|R,	CP_EV_DLR_NCF,		NULL,				TO(SAME),
		NULL},
	{P,	CP_EV_DLR_RDATA,	cp_fsm_dlr_rdata,		TO(NONE),
		"RDATA from the off-tree DLR in PENDING -> deleted (re-sourced downstream)"},
	{O|NN,	CP_EV_DLR_RDATA,	cp_fsm_dlr_rdata,		TO(NONE),
		"RDATA from the off-tree DLR in OUTSTANDING -> deleted (re-sourced downstream)"},
	{F,	CP_EV_DLR_RDATA,	cp_fsm_dlr_rdata,		TO(NONE),
		"RDATA from the off-tree DLR in FORWARDING -> deleted (re-sourced downstream)"},
	/* repaired already: nobody here is waiting for it */
	{R,	CP_EV_DLR_RDATA,	NULL,				TO(SAME),
		NULL},

	/* parity state per transmission group (11.6): PENDING or OUTSTANDING, by counts */
	{X,	CP_EV_PARITY_NAK,	cp_fsm_parity_nak_first,	TO(PENDING),
		"parity NAK for %s on %s -> PENDING (forwarded for %s)"},
	{P|O,	CP_EV_PARITY_NAK,	cp_fsm_parity_nak,		TO(PENDING),
		"parity NAK for %s on %s -> PENDING (forwarded for %s)"},
	{P|O,	CP_EV_PARITY_NAK_FROM_DLR, cp_fsm_parity_nak_dlr_fallback, TO(PENDING),
		"parity NAK for %s on %s -> PENDING (forwarded for %s)"},
	{P|O,	CP_EV_PARITY_NAK_DUPLICATE, cp_fsm_parity_nak_duplicate, TO(SAME),
		"parity NAK for %s on %s: eliminated (largest known %s)"},
	{P|O,	CP_EV_PARITY_NNAK,	cp_fsm_parity_nnak,		TO(SAME),
		NULL},
	{X,	CP_EV_PARITY_NCF,	cp_fsm_parity_ncf_anticipate,	TO(OUTSTANDING),
		"parity NCF for %s -> OUTSTANDING (largest %s)"},
	{P|O,	CP_EV_PARITY_NCF,	cp_fsm_parity_ncf,		TO(OUTSTANDING),
		"parity NCF for %s -> OUTSTANDING (largest %s)"},
	{P,	CP_EV_PARITY_NCF_SHORT,	cp_fsm_parity_ncf_short,	TO(SAME),
		"parity NCF for %s in PENDING: below %s, still pending"},
	{O,	CP_EV_PARITY_NCF_SHORT,	cp_fsm_parity_ncf,		TO(OUTSTANDING),
		"parity NCF for %s -> OUTSTANDING (largest %s)"},
	{P|O,	CP_EV_PARITY_RDATA_REPAIRED, cp_fsm_repair_completed,	TO(NONE),
		"parity RDATA %s: every interface repaired, deleted"},
	{P|O,	CP_EV_DLR_PARITY_REPAIRED, cp_fsm_repair_completed,	TO(NONE),
		NULL},

	/* timers (7.2-7.8) */
	{P,	CP_EV_NAK_RPT_RTE,	cp_fsm_nak_repeat,		TO(SAME),
		"NAK_RPT_RTE timer in PENDING -> PENDING (NAK repeated)"},
	{P,	CP_EV_NAK_RPT_IVL,	cp_fsm_retry_expired,		TO(NONE),
		"timer in PENDING -> deleted (NAK_RPT_IVL expired, no NCF)"},
	{O,	CP_EV_NAK_ELIM_IVL,	cp_fsm_elimination_over,	TO(SAME),
		"NAK_ELIM_IVL timer in OUTSTANDING -> OUTSTANDING (elimination over)"},
	/* 9.5.3.2: NNAK state lives NAK_ELIM_IVL (its line has always said NAK_RDATA_IVL) */
	{NN,	CP_EV_NAK_ELIM_IVL,	cp_fsm_repair_expired,		TO(NONE),
		"timer in OUTSTANDING (NNAK) -> deleted (NAK_RDATA_IVL expired, no RDATA)"},
	{O,	CP_EV_NAK_RDATA_IVL,	cp_fsm_repair_expired,		TO(NONE),
		"timer in OUTSTANDING -> deleted (NAK_RDATA_IVL expired, no RDATA)"},
	{F,	CP_EV_LINGER,		cp_fsm_linger_expired,		TO(NONE),
		"timer in FORWARDING -> deleted (linger expired, interfaces left unrepaired)"},
	{R,	CP_EV_CROSSING_OVER,	cp_fsm_crossing_over,		TO(NONE),
		"timer in REPAIRED -> deleted (crossing window over)"},
	/* 9.5.3.2: a redirected NAK unconfirmed for NAK_RPT_IVL */
	{P,	CP_EV_DLR_TIMEOUT,	cp_fsm_dlr_timeout,		TO(SAME),
		"NAK_RPT_IVL timer in PENDING: DLR %s never confirmed, dropped; NAKs go upstream"},
};
/* clang-format on */
const unsigned cp_fsm_rows = sizeof(cp_fsm_table) / sizeof(cp_fsm_table[0]);

#undef P
#undef O
#undef F
#undef NN
#undef R
#undef X
#undef TO

static const struct {
	const char *name;
	uint8_t kind; /* enum cp_log_kind */
	bool caller_logs;
} events[CP_EV_COUNT] = {
#define CP_REPAIR_EVENT_DESC(sym, name, kind, caller_logs)                                         \
	[CP_EV_##sym] = {name, kind, caller_logs},
	CP_REPAIR_EVENTS(CP_REPAIR_EVENT_DESC)
#undef CP_REPAIR_EVENT_DESC
};

const char *cp_fsm_event_name(enum cp_repair_event ev)
{
	return (unsigned)ev < CP_EV_COUNT ? events[ev].name : "unknown event";
}

const char *cp_fsm_phase_name(unsigned phase)
{
	switch (phase) {
	case CP_FSM_NNAK:
		return "OUTSTANDING (NNAK)";
	case CP_FSM_REPAIRED:
		return "REPAIRED";
	case CP_FSM_NONE:
		return "NONE";
	default:
		return cp_phase_name((enum cp_repair_phase)phase);
	}
}

/* The first row for each event and phase, looked up once per packet event. */
void cp_fsm_init(struct cp *cp)
{
	memset(cp->fsm_index, CP_FSM_NO_ROW, sizeof(cp->fsm_index));
	for (unsigned i = cp_fsm_rows; i-- > 0;) {
		for (unsigned phase = 0; phase < CP_FSM_PHASES; phase++) {
			if ((cp_fsm_table[i].phases & CP_FSM_IN(phase)) != 0)
				cp->fsm_index[cp_fsm_table[i].event][phase] = (uint8_t)i;
		}
	}
}

void cp_fsm_log(struct cp *cp, const struct cp_session *s, uint32_t sqn,
	const struct cp_fsm_row *row, const char *const *arg)
{
	static const char *const none[3];

	if (arg == NULL)
		arg = none;
	cp_log_repair(cp, (enum cp_log_kind)events[row->event].kind, s, sqn, row->text, arg[0],
		arg[1], arg[2]);
}

bool cp_fsm_create(struct cp *cp, struct cp_fsm *x, bool parity)
{
	cp_fsm_state(cp, x,
		cp_repair_create_kind(cp, x->sid, x->sqn, x->now, parity, x->in_if, x->nak));
	return x->id != CP_NIL;
}

const struct cp_fsm_row *cp_fsm_unexpected(
	struct cp *cp, const struct cp_fsm *x, enum cp_repair_event ev, unsigned phase)
{
	cp->fsm_unexpected++;
	cp_log_repair(cp, CP_LOG_EVENT, x->s, x->sqn, "%s not expected in %s: ignored",
		events[ev].name, cp_fsm_phase_name(phase));
	return NULL;
}

/* The row's line, when its debug category is on, unless its caller writes it later. */
void cp_fsm_logged(struct cp *cp, const struct cp_fsm *x, const struct cp_fsm_row *row)
{
	if (row->text != NULL && !events[row->event].caller_logs &&
		cp_log_enabled(cp, (enum cp_log_kind)events[row->event].kind))
		cp_fsm_log(cp, x->s, x->sqn, row, x->arg);
}
