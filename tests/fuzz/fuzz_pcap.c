/*
 * libFuzzer target for capture replay (`pgmrouterd -R`): the input is a whole file, pcap or
 * pcapng, replayed through router assist offline on two interfaces with the configuration's
 * defaults, as offline_replay() does, and its counters reported. Every record reaches the codec
 * and the control plane that parses; nothing may read past a record or the file.
 *
 * Seed mode (tests/fuzz/run.sh): the committed seeds (tests/fuzz/corpus/fuzz_pcap) are the first
 * records of the OpenPGM captures in tests/fixtures, as pcap and pcapng; it writes none.
 */
#include "tests/fuzz/fuzz_router.h"

static struct assist_conf conf;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const ifs[] = {"eth0=198.18.1.1/24", "eth1=198.18.2.1/24"};
	struct offline *o;
	char path[4096], err[256];
	FILE *f;

	fuzz_path(path, sizeof(path), "replay.pcap");
	f = fopen(path, "wb");
	CHECK(f != NULL && fwrite(data, 1, size, f) == size);
	fclose(f);
	o = offline_replay_open(&conf, ifs, 2, true, err, sizeof(err));
	CHECK(o != NULL);
	if (offline_replay_file(o, path, err, sizeof(err)) == 0)
		offline_replay_report(o);
	else
		CHECK(err[0] != '\0'); /* a refused file says why */
	offline_free(o);
	return 0;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_seed_mode(NULL, 0);
	fuzz_router_init(false);
	CHECK(pgm_conf_from_cfg(cfg_running(), &conf) == 0);
	return 0;
}
