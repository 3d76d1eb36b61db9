#!/bin/bash
# router_repair.sh with every packet in UDP encapsulation (ports 3055 upstream, 3056 downstream,
# as OpenPGM and ZeroMQ's epgm send them): the same results are expected.
ROUTER_ENCAP=udp NS_TEST=router_udp exec bash "$(dirname "$0")/router_repair.sh"
