// SPDX-License-Identifier: GPL-2.0
/*
 * NUMA page-cache replication: replicas follow the tasks that map them.
 *
 * A task maps the replicas of the node it faults on.  When it moves to
 * another node (sched_setaffinity(), a cpuset change, load balancing, NUMA
 * balancing), what it mapped stays where it was, remote now, until
 * something unmaps it: its text is mapped already and takes no fault.  So
 * the scheduler marks a task that changes node, and on its way back to
 * user space the task unmaps the file pages of its replicated mappings;
 * its next accesses map the copies of its new node, the page cache itself
 * if it lives there.
 *
 * Threads share page tables: a page is mapped once for all the threads of
 * a process.  Replicas are mapped into a process only while all its
 * threads last ran on one node; a fault by a thread of a process whose
 * threads span nodes maps the page cache itself, and a thread that moves
 * so that they span nodes unmaps the replicas mapped so far.  Each thread
 * then reads the page as it would without replication, and the node that
 * holds the page cache reads it locally.
 */

#include <linux/mm.h>
#include <linux/mmap_lock.h>
#include <linux/resume_user_mode.h>
#include <linux/sched.h>

#include "internal.h"

/*
 * Whether a mapping may map replicas at all: not while its file has
 * writers (a writable shared mapping of it, say), which remove them.
 */
static bool replica_vma_followed(struct vm_area_struct *vma)
{
	return replica_vma_replicated(vma) &&
	       !replica_writers(vma->vm_file->f_mapping);
}

/**
 * __replica_follow_task - remap a task's replicated pages on its new node
 *
 * Called on the way back to user space of a task that the scheduler moved
 * to another node, or placed on another node than its parent's at fork.
 * Unmaps the file pages (not the private copies a write made) of every
 * mapping the policy replicates, so that the next access maps the copy
 * of the node the task runs on, or the page cache itself if the threads
 * of the process now span nodes.  While they span nodes, their faults map
 * the page cache: a move then unmaps only what was mapped from replicas
 * since the last time, if anything.
 */
void __replica_follow_task(void)
{
	struct zap_details details = { .even_cows = false };
	struct mm_struct *mm = current->mm;
	struct vm_area_struct *vma;
	struct vma_iterator vmi;
	bool followed = false;

	task_clear_replica_follow(current);
	if (!mm)
		return;
	if (!test_bit(MMF_REPLICA_MAPPED, &mm->flags) &&
	    !replica_threads_on_node(numa_mem_id()))
		return;
	if (mmap_read_lock_killable(mm))
		return;
	clear_bit(MMF_REPLICA_MAPPED, &mm->flags);
	/*
	 * Cleared before the unmapping starts: a fault that maps a replica
	 * behind the unmapping sets the bit again, after its mapping.
	 */
	smp_mb__after_atomic();
	vma_iter_init(&vmi, mm, 0);
	for_each_vma(vmi, vma) {
		if (!replica_vma_followed(vma))
			continue;
		zap_page_range_single(vma, vma->vm_start,
				      vma->vm_end - vma->vm_start, &details);
		followed = true;
	}
	mmap_read_unlock(mm);
	if (followed)
		replica_count_mm_events(mm, REPLICA_FOLLOW, 1);
}
