// subtransaction_notes.hpp: what a transaction keeps in memory until it commits (events for the relay,
// times for the latency histograms) is labelled with the subtransaction that noted it. Subtransaction ids
// grow and a subtransaction's descendants start after it, so one that rolls back owns every note labelled
// with its id or a later one.
#pragma once

#include "pg/pg.hpp"

namespace pgjq {

// Drops the notes of the rolled-back subtransaction `aborted` (and of its descendants) from notes[0 ..
// count), keeping the others in order; returns how many are left. `label` names the notes' field.
template <typename Note>
int drop_notes_of_aborted(Note* notes, int count, SubTransactionId aborted, SubTransactionId Note::*label)
{
    int kept = 0;
    for (int i = 0; i < count; i++)
        if (notes[i].*label < aborted)
            notes[kept++] = notes[i];
    return kept;
}

}  // namespace pgjq
