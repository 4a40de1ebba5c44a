// depth_slots.cpp: the counter slot of each backend (see depth_slots.hpp).
#include "core/depth_slots.hpp"

#include "pg/compat.hpp"
#include "pg/limits.hpp"
#include "pg/settings.hpp"

namespace {

using namespace pgjq;

// The process that holds each slot; 0: free. A crash resets shared memory with every slot free.
struct slot_owners {
    pid_t owner[k_depth_slots];
};

slot_owners* s_owners = nullptr;
LWLock* s_owners_lock = nullptr;
int16 s_slot = -1;  // this backend's, once chosen

Size owners_size()
{
    return sizeof(slot_owners);
}

void attach_owners(void* memory, bool created, LWLockPadded* locks)
{
    s_owners = static_cast<slot_owners*>(memory);
    if (created)
        memset(s_owners, 0, sizeof(slot_owners));
    s_owners_lock = &locks[0].lock;
}

void release_slot(int, Datum slot)
{
    LWLockAcquire(s_owners_lock, LW_EXCLUSIVE);
    if (s_owners->owner[DatumGetInt16(slot)] == MyProcPid)
        s_owners->owner[DatumGetInt16(slot)] = 0;
    LWLockRelease(s_owners_lock);
}

// The lowest free slot, taken for this backend's lifetime; -1 when every one is taken.
int16 take_free_slot()
{
    int16 taken = -1;
    LWLockAcquire(s_owners_lock, LW_EXCLUSIVE);
    for (int16 i = 0; i < k_depth_slots && taken < 0; i++)
        if (s_owners->owner[i] == 0) {
            s_owners->owner[i] = MyProcPid;
            taken = i;
        }
    LWLockRelease(s_owners_lock);
    if (taken >= 0)
        before_shmem_exit(release_slot, Int16GetDatum(taken));
    return taken;
}

}  // namespace

namespace pgjq {

const shared_region k_depth_slots_region = {"pgjq depth slots", owners_size, one_lwlock, attach_owners};

int16 depth_slot()
{
    if (forced_depth_slot >= 0)
        return static_cast<int16>(forced_depth_slot);
    if (s_slot < 0) {
        s_slot = s_owners != nullptr ? take_free_slot() : -1;
        if (s_slot < 0)
            s_slot = static_cast<int16>(compat::backend_number() % k_depth_slots);
    }
    return s_slot;
}

}  // namespace pgjq
