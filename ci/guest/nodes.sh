# SPDX-License-Identifier: MIT
# Sourced by ci/softroce: the two-node topology (`--nodes 2`). Two guests, railguard-node0 and
# railguard-node1, each with one virtio NIC per rail and one for control. Each NIC is joined
# to its peer on the other node by a pair of qemu dgram netdevs (UDP on the host's loopback),
# so a rail's packets really leave one kernel and enter the other: a wire that sch_netem can
# impair and that can be crossed (--cross: node 0's rail 0 to node 1's rail 1 and so on).
# rxe runs on each rail NIC (ci/rails nic). Node 1 starts sshd on the control link and waits;
# node 0 runs CMD with RG_SOFTROCE_NODES set and ends the run; its status is ours.
#
# Needs from ci/softroce: rails, mtu, timeout, top, cache, log, prepare_guest, pick_accel,
# pass_env, devices.

# Node n, rail k's MAC; rail 63 is the control link (ci/rails nic reads the same scheme).
node_mac() { printf '52:54:00:9b:%02x:%02x' "$1" "$2"; }

# Free UDP ports on the host's loopback: base .. base+2*(rails+1)-1, none bound.
node_ports() {
    local base n=$((2 * (rails + 1))) try p busy
    for try in 1 2 3 4 5 6 7 8; do
        base=$((20000 + (RANDOM % 2000) * 20))
        busy=0
        for ((p = base; p < base + n; p++)); do
            if ss -Hlun "sport = :$p" 2>/dev/null | grep -q .; then busy=1; break; fi
        done
        [ "$busy" = 0 ] && { echo "$base"; return 0; }
    done
    return 1
}

# The qemu arguments of node n: its NICs, each wired to the peer's by a dgram pair. Rail k of
# node 0 has ports base+2k (local) and base+2k+1 (remote); node 1 takes the other end of rail
# wire(k), where wire is the identity, or the crossing.
node_nics() { # node base cross
    local n=$1 base=$2 cross=$3 k w lp rp
    node_args=()
    for ((k = 0; k <= rails; k++)); do
        w=$k
        if [ "$k" = "$rails" ]; then
            w=$rails # the control link is never crossed
        elif [ "$cross" = 1 ] && [ "$n" = 1 ]; then
            w=$(((k + 1) % rails))
        fi
        if [ "$n" = 0 ]; then
            lp=$((base + 2 * w)) rp=$((base + 2 * w + 1))
        else
            lp=$((base + 2 * w + 1)) rp=$((base + 2 * w))
        fi
        local mac
        if [ "$k" = "$rails" ]; then mac=$(node_mac "$n" 99); else mac=$(node_mac "$n" "$k"); fi
        node_args+=(-netdev "dgram,id=n$k,local.type=inet,local.host=127.0.0.1,local.port=$lp,remote.type=inet,remote.host=127.0.0.1,remote.port=$rp"
            -device "virtio-net-pci,netdev=n$k,mac=$mac,host_mtu=9000")
    done
}

# The script each node runs. Node 1 is a service node: it is stopped by node 0's end.
node_script() { # node dir cmd...
    local n=$1 d=$2
    shift 2
    echo '#!/bin/bash'
    echo "echo rails >$d/phase$n"
    pass_env
    echo "export RG_SOFTROCE_RAILS=$rails RG_SOFTROCE_DEVICES='$(devices)' RG_SOFTROCE_MODE_USED=guest"
    echo "export RG_SOFTROCE_NODES='10.9.99.1 10.9.99.2' RG_SOFTROCE_NODE=$n RG_SOFTROCE_CROSSED=$cross"
    echo "$top/ci/rails nic $rails $mtu $n || { echo 97 >$d/status$n; exit 1; }"
    # sshd as root on the control link only, the run's key the one way in: node 1 for node 0's
    # mpirun, both for railguard's own launcher (run --hosts starts every rank over ssh).
    echo "mkdir -p /run/sshd"
    echo "/usr/sbin/sshd -f /dev/null -h /etc/ssh/ssh_host_ed25519_key -o ListenAddress=10.9.99.$((n + 1)) \\"
    echo "  -o AuthorizedKeysFile=$d/id.pub -o StrictModes=no -o UsePAM=no -o PermitRootLogin=prohibit-password \\"
    echo "  -o PidFile=/run/sshd.pid -o AcceptEnv='RG_* MLX_* JACCL_*' || { echo 96 >$d/status$n; exit 1; }"
    if [ "$n" = 1 ]; then
        echo "echo up >$d/phase1"
        # Node 0's status, read over the share, is the end of the run.
        echo "while [ ! -s $d/status ]; do sleep 0.5; done"
        echo "echo 0 >$d/status1"
        return
    fi
    echo "echo wait >$d/phase0"
    echo "i=0; until [ -s $d/status1 ] || grep -q up $d/phase1 2>/dev/null; do i=\$((i + 1)); [ \$i -lt 600 ] || { echo 95 >$d/status; exit 1; }; sleep 0.5; done"
    echo "[ -s $d/status1 ] && { echo 95 >$d/status; exit 1; }"
    # Say what the wire does, rail by rail: the NIC that answers for node 1's address on a rail
    # (by its MAC) is the one the cable reaches. IP alone would not tell: Linux answers ARP for
    # any of its addresses on any NIC, so a crossed rail still pings, as real hosts do.
    cat <<'EOS'
k=0
while [ $k -lt $RG_SOFTROCE_RAILS ]; do
    busybox ping -c 1 -W 2 10.9.$k.2 >/dev/null 2>&1
    mac=$(ip neigh show 10.9.$k.2 dev rg$k | sed -n 's/.*lladdr \([0-9a-f:]*\).*/\1/p')
    case "$mac" in
    52:54:00:9b:01:*) j=$((0x${mac##*:})); [ "$j" = 99 ] && j=control
        if [ "$j" = "$k" ]; then echo "railguard-node0: rail $k: wired to node 1's rail $k"
        else echo "railguard-node0: rail $k: wired to node 1's rail $j (crossed)"; fi ;;
    *) echo "railguard-node0: rail $k: no answer from node 1" ;;
    esac
    k=$((k + 1))
done
EOS
    echo "echo cmd >$d/phase0"
    printf 'cd %q || exit 1\n' "$PWD"
    printf '%q ' "$@"
    echo
    echo "echo \$? >$d/status"
}

nodes_run() { # cmd...
    prepare_guest
    local accel base
    accel=$(pick_accel)
    mkdir -p "$cache"
    local d
    d=$(mktemp -d "$cache/nodes.XXXXXX")
    ssh-keygen -q -t ed25519 -N '' -C railguard-nodes -f "$d/id" || die "ssh-keygen failed (openssh-client?)"
    [ -x /usr/sbin/sshd ] || die "no /usr/sbin/sshd: ci/deps installs openssh-server"
    base=$(node_ports) || die "no free UDP ports on the loopback for the nodes' wires"
    local n pids=() t0=$SECONDS
    for n in 0 1; do
        node_script "$n" "$d" "$@" >"$d/script$n"
        echo boot >"$d/phase$n"
        node_nics "$n" "$base" "$cross"
        qemu_base "$accel"
        # One vCPU and a smaller memory per node: two nodes on a machine of two cores.
        local i
        for i in "${!qemu_args[@]}"; do
            [ "${qemu_args[$i]}" = -smp ] && qemu_args[i + 1]=${RG_NODE_SMP:-1}
            [ "${qemu_args[$i]}" = -m ] && qemu_args[i + 1]=${RG_NODE_MEM:-2048}
        done
        qemu-system-x86_64 "${qemu_args[@]}" "${node_args[@]}" \
            -append "console=ttyS0 quiet loglevel=3 panic=-1 rg.script=$d/script$n rg.share=$top rg.host=railguard-node$n rg.sshkey=$d/id" \
            </dev/null > >(sed -u "s/^/node$n: /") 2>&1 &
        pids+=($!)
    done
    log "booting two nodes ($accel, $rails rail(s) each$([ "$cross" = 1 ] && echo ", crossed"), MTU $mtu, UDP $base..)"
    local rc=0 phase since=$SECONDS last=boot limit booted=""
    while kill -0 "${pids[0]}" 2>/dev/null; do
        phase=$(cat "$d/phase0" 2>/dev/null || echo boot)
        if [ "$phase" != "$last" ]; then
            [ "$last" = boot ] && log "node 0 booted in $((SECONDS - t0)) s"
            [ "$phase" = cmd ] && log "node 1 up; both nodes ready in $((SECONDS - t0)) s"
            last=$phase since=$SECONDS
        fi
        case "$phase" in
        boot) limit=${RG_GUEST_BOOT_TIMEOUT:-180} ;;
        rails) limit=60 ;;
        wait) limit=${RG_GUEST_BOOT_TIMEOUT:-180} ;;
        *) limit=$timeout ;;
        esac
        if [ $((SECONDS - since)) -ge "$limit" ]; then
            log "node 0 timed out in phase '$phase' after $limit s (node 1: $(cat "$d/phase1" 2>/dev/null)); killed"
            rc=124
            break
        fi
        sleep 0.2
    done
    # Node 1 is a service node: it powers off when node 0's status appears; stop it otherwise.
    local waited=0
    while kill -0 "${pids[1]}" 2>/dev/null && [ "$waited" -lt 100 ] && [ "$rc" = 0 ]; do
        sleep 0.2
        waited=$((waited + 1))
    done
    kill "${pids[@]}" 2>/dev/null || true
    sleep 1
    kill -9 "${pids[@]}" 2>/dev/null || true
    wait "${pids[@]}" 2>/dev/null || true
    if [ "$rc" = 0 ]; then
        if [ ! -s "$d/status" ]; then
            log "node 0 powered off in phase '$(cat "$d/phase0")' without an exit status (node 1: $(cat "$d/phase1" 2>/dev/null), status $(cat "$d/status1" 2>/dev/null))"
            rc=125
        else
            rc=$(cat "$d/status")
            log "nodes finished in $((SECONDS - t0)) s, status $rc"
        fi
    fi
    rm -rf "$d"
    return "$rc"
}
