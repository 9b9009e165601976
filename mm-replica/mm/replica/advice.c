// SPDX-License-Identifier: GPL-2.0
/*
 * NUMA page-cache replication: MADV_REPLICATE and MADV_NOREPLICATE.
 */

#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/shmem_fs.h>

#include "internal.h"

/**
 * replica_madvise - opt a range in or out of replication
 * @vma: the VMA madvise() is applied to
 * @vm_flags: its new flags, updated
 * @advice: MADV_REPLICATE or MADV_NOREPLICATE
 *
 * Only file mappings that may hold replicas can be advised: not anonymous,
 * hugetlb, DAX or shmem memory, and not shared mappings that may write.
 *
 * Return: 0, or -EINVAL for a range that cannot be advised.
 */
int replica_madvise(struct vm_area_struct *vma, unsigned long *vm_flags,
		    int advice)
{
	if (!vma->vm_file || vma_is_anonymous(vma) ||
	    is_vm_hugetlb_page(vma) || vma_is_dax(vma) ||
	    shmem_file(vma->vm_file) ||
	    (vma->vm_flags & (VM_SHARED | VM_MAYWRITE)) ==
	    (VM_SHARED | VM_MAYWRITE))
		return -EINVAL;
	if (advice == MADV_REPLICATE) {
		*vm_flags &= ~VM_NOREPLICATE;
		*vm_flags |= VM_REPLICATE;
	} else {
		*vm_flags &= ~VM_REPLICATE;
		*vm_flags |= VM_NOREPLICATE;
	}
	return 0;
}

/**
 * replica_madvise_done - finish madvise() on a range with its new flags
 * @vma: the VMA of [@start, @end), flags updated, write-locked
 * @start: start of the advised range
 * @end: end of the advised range
 * @advice: MADV_REPLICATE or MADV_NOREPLICATE
 *
 * MADV_NOREPLICATE unmaps the file pages mapped there, so that the next
 * access maps the original instead of a replica.  The mapping is write
 * locked, so no fault maps a replica again meanwhile; private copies made
 * by writes stay.
 */
void replica_madvise_done(struct vm_area_struct *vma, unsigned long start,
			  unsigned long end, int advice)
{
	struct zap_details details = { .even_cows = false };

	if (advice == MADV_NOREPLICATE)
		zap_page_range_single(vma, start, end - start, &details);
}
