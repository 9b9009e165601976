/* SPDX-License-Identifier: GPL-2.0 */
/*
 * NUMA page-cache replication: a replica made, mapped again, and dropped,
 * with the reason.  The file is named by its device and inode number, as
 * in the filemap events, and the page by its index in the file.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM replica

#if !defined(_TRACE_REPLICA_H) || defined(TRACE_HEADER_MULTI_READ)
#define _TRACE_REPLICA_H

#include <linux/fs.h>
#include <linux/replica.h>
#include <linux/tracepoint.h>

/* For user space to read the reasons in the format. */
TRACE_DEFINE_ENUM(REPLICA_DROP_WRITE);
TRACE_DEFINE_ENUM(REPLICA_DROP_TRUNCATE);
TRACE_DEFINE_ENUM(REPLICA_DROP_INVALIDATE);
TRACE_DEFINE_ENUM(REPLICA_DROP_INODE);
TRACE_DEFINE_ENUM(REPLICA_DROP_UNCACHE);
TRACE_DEFINE_ENUM(REPLICA_DROP_SHRINK);
TRACE_DEFINE_ENUM(REPLICA_DROP_POLICY);
TRACE_DEFINE_ENUM(REPLICA_DROP_MIGRATE);
TRACE_DEFINE_ENUM(REPLICA_DROP_RECLAIM);
TRACE_DEFINE_ENUM(REPLICA_DROP_SPLIT);
TRACE_DEFINE_ENUM(REPLICA_DROP_THP_COLLAPSE);
TRACE_DEFINE_ENUM(REPLICA_DROP_MEMORY_FAILURE);
TRACE_DEFINE_ENUM(REPLICA_DROP_SOFT_OFFLINE);
TRACE_DEFINE_ENUM(REPLICA_DROP_LONGTERM_PIN);
TRACE_DEFINE_ENUM(REPLICA_DROP_MOVE);
TRACE_DEFINE_ENUM(REPLICA_DROP_STALE);

/*
 * The replica (its pfn, node and pages) and the page of the file it
 * copies, named by device, inode number and index as in the filemap
 * events.  Written out in each event: trace headers cannot share fields
 * but through a macro of several statements.
 */
DECLARE_EVENT_CLASS(replica_page,
		    TP_PROTO(struct folio *replica,
			     struct address_space *mapping),
		    TP_ARGS(replica, mapping),
		    TP_STRUCT__entry(__field(unsigned long, pfn)
				     __field(unsigned long, ino)
				     __field(pgoff_t, index)
				     __field(dev_t, dev)
				     __field(unsigned int, nr)
				     __field(int, nid)),
		    TP_fast_assign(__entry->pfn = folio_pfn(replica);
				   __entry->ino = mapping->host->i_ino;
				   __entry->index = replica->index;
				   __entry->dev = mapping->host->i_sb->s_dev;
				   __entry->nr = folio_nr_pages(replica);
				   __entry->nid = folio_nid(replica);),
		    TP_printk("dev %d:%d ino %lx index %lu pages %u node %d pfn 0x%lx",
			      MAJOR(__entry->dev), MINOR(__entry->dev),
			      __entry->ino, __entry->index, __entry->nr,
			      __entry->nid, __entry->pfn));

/* A replica was made on "node", for a fault or a read(2) there. */
DEFINE_EVENT(replica_page, replica_make,
	     TP_PROTO(struct folio *replica, struct address_space *mapping),
	     TP_ARGS(replica, mapping));

/* A fault or fault-around mapped a replica made before. */
DEFINE_EVENT(replica_page, replica_map,
	     TP_PROTO(struct folio *replica, struct address_space *mapping),
	     TP_ARGS(replica, mapping));

/* A replica was dropped, for "reason" (enum replica_drop_reason). */
TRACE_EVENT(replica_drop,
	    TP_PROTO(struct folio *replica, struct address_space *mapping,
		     enum replica_drop_reason reason),
	    TP_ARGS(replica, mapping, reason),
	    TP_STRUCT__entry(__field(unsigned long, pfn)
			     __field(unsigned long, ino)
			     __field(pgoff_t, index)
			     __field(dev_t, dev)
			     __field(unsigned int, nr)
			     __field(int, nid)
			     __field(enum replica_drop_reason, reason)),
	    TP_fast_assign(__entry->pfn = folio_pfn(replica);
			   __entry->ino = mapping->host->i_ino;
			   __entry->index = replica->index;
			   __entry->dev = mapping->host->i_sb->s_dev;
			   __entry->nr = folio_nr_pages(replica);
			   __entry->nid = folio_nid(replica);
			   __entry->reason = reason;),
	    TP_printk("dev %d:%d ino %lx index %lu pages %u node %d pfn 0x%lx reason %s",
		      MAJOR(__entry->dev), MINOR(__entry->dev),
		      __entry->ino, __entry->index, __entry->nr,
		      __entry->nid, __entry->pfn,
		      __print_symbolic(__entry->reason,
				       { REPLICA_DROP_WRITE, "write" },
				       { REPLICA_DROP_TRUNCATE, "truncate" },
				       { REPLICA_DROP_INVALIDATE, "invalidate" },
				       { REPLICA_DROP_INODE, "inode" },
				       { REPLICA_DROP_UNCACHE, "uncache" },
				       { REPLICA_DROP_SHRINK, "shrink" },
				       { REPLICA_DROP_POLICY, "policy" },
				       { REPLICA_DROP_MIGRATE, "migrate" },
				       { REPLICA_DROP_RECLAIM, "reclaim" },
				       { REPLICA_DROP_SPLIT, "split" },
				       { REPLICA_DROP_THP_COLLAPSE, "thp_collapse" },
				       { REPLICA_DROP_MEMORY_FAILURE, "memory_failure" },
				       { REPLICA_DROP_SOFT_OFFLINE, "soft_offline" },
				       { REPLICA_DROP_LONGTERM_PIN, "longterm_pin" },
				       { REPLICA_DROP_MOVE, "move" },
				       { REPLICA_DROP_STALE, "stale" })))

#endif /* _TRACE_REPLICA_H */

/* This part must be outside protection */
#include <trace/define_trace.h>
